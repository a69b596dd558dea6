import AuthSessionJOSE
import Foundation
import Testing

/// Promise 1: `JSONValue.read` is RFC 8259's grammar exactly, UTF-8 strict, depth-bounded,
/// duplicate-refusing; `.notUTF8` wins whenever the input is not UTF-8.
@Suite(
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "pure parsing, thousands of cases: plain swift test runs it; under TSan it would only starve the tests whose subject is timing"
    )
)
struct Adversary28GrammarTests {

    /// Records one issue per case whose outcome differs; returns how many cases were tried.
    @discardableResult
    private func check(
        _ cases: [[UInt8]],
        _ promise: (Adv28Outcome) -> Bool,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        for bytes in cases {
            let outcome = adv28Read(bytes)
            if !promise(outcome) {
                Issue.record("\(what): input \(adv28Hex(bytes)) read as \(outcome)", sourceLocation: sourceLocation)
            }
        }
        return cases.count
    }

    private func accepted(_ expected: JSONValue) -> (Adv28Outcome) -> Bool { { $0 == .value(expected) } }
    private let invalid: (Adv28Outcome) -> Bool = { $0 == .error(.invalid) }
    private let notUTF8: (Adv28Outcome) -> Bool = { $0 == .error(.notUTF8) }
    private let duplicate: (Adv28Outcome) -> Bool = { $0 == .error(.duplicateMember) }
    private let refused: (Adv28Outcome) -> Bool = { $0.isError }

    @Test func acceptsTheGrammarsCornerCases() {
        let cases: [(String, JSONValue)] = [
            ("0", .number(0)), ("-0", .number(-0.0)), ("1", .number(1)), ("-1", .number(-1)),
            ("0.5", .number(0.5)), ("1e5", .number(1e5)), ("1E5", .number(1e5)), ("1e+5", .number(1e5)),
            ("1e-5", .number(1e-5)), ("1.5E-0", .number(1.5)), ("1e05", .number(1e5)), ("0e0", .number(0)),
            ("-0.0e-0", .number(-0.0)), ("1e-400", .number(0)), ("123456789012345", .number(123_456_789_012_345)),
            ("1234567890123456", .number(1_234_567_890_123_456)), ("9007199254740993", .number(9_007_199_254_740_992)),
            ("1.7976931348623157e308", .number(.greatestFiniteMagnitude)),
            ("4.9406564584124654e-324", .number(.leastNonzeroMagnitude)),
            ("true", .bool(true)), ("false", .bool(false)), ("null", .null),
            ("\"\"", .string("")), (" \t\r\n[ \t\r\n] \t\r\n", .array([])), ("{}", .object([:])),
            (#""\u0000""#, .string("\u{0}")), (#""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{08}\u{0C}\n\r\t")),
            (#""\uD83D\uDE00""#, .string("\u{1F600}")), (#""\ud83d\ude00""#, .string("\u{1F600}")),
            (#""\uDBFF\uDFFF""#, .string("\u{10FFFF}")), (#""\uFFFF\uFEFF""#, .string("\u{FFFF}\u{FEFF}")),
            ("\"\u{7F}\"", .string("\u{7F}")), ("\"\u{FEFF}\"", .string("\u{FEFF}")),
            ("\"\u{10FFFF}\u{2028}é\"", .string("\u{10FFFF}\u{2028}é")),
            (
                #"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#,
                .object([
                    "a": .object(["a": .number(1)]),
                    "b": .array([.object(["a": .number(1)]), .object(["a": .number(2)])]),
                ])
            ),
            (#"{"":1}"#, .object(["": .number(1)])), (#"{"a":1,"A":2}"#, .object(["a": .number(1), "A": .number(2)])),
            // Not canonically equivalent: compatibility forms are distinct names.
            (#"{"ﬁ":1,"fi":2}"#, .object(["ﬁ": .number(1), "fi": .number(2)])),
        ]
        var tried = 0
        for (text, expected) in cases { tried += check([adv28Bytes(text)], accepted(expected), "valid \(text)") }
        #expect(tried == cases.count)
    }

    @Test func refusesWhatRFC8259DoesNotSpell() {
        let texts: [String] = [
            "", " ", "\n", "//c\n1", "/*c*/1", "1/*c*/", "[1,]", "{\"a\":1,}", "[,1]", "[1,,2]", "{,}", "[1 2]",
            "01", "-01", "00", "+1", ".5", "1.", "1.e5", "1e", "1e+", "-", "--1", "-.5", "0x10", "1_000", "Infinity",
            "-Infinity", "NaN", "1e400", "-1e400", "1.7976931348623159e308", "1" + String(repeating: "0", count: 309),
            "0." + String(repeating: "9", count: 10) + "e999", "tru", "True", "nul", "nulll", "falsey", "t",
            "undefined",
            "'a'", "\"a", "\"\\\"", "\"\\a\"", "\"\\x41\"", "\"\\'\"", "\"\\U0041\"", "\"\\u12\"", "\"\\u12G4\"",
            "\"\\u\"", "\"\\ \"", "\"\\\n\"", "\"\\0\"", "\"\\uD800\"", "\"\\uDBFF\"", "\"\\uDC00\"", "\"\\uDFFF\"",
            "\"\\uD800\\u0041\"", "\"\\uD800x\"", "\"\\uD800\\uD800\"", "\"\\uDC00\\uD800\"", "\"\\uD800\\\"",
            "\"\\uD800\\n\"", "\"\\uD800\\u\"", "\"\\uD800\\uDC0\"", "\"\\uD800\\uDBFF\"", "\"\\ud800\\ue000\"",
            "{\"a\"}", "{\"a\" 1}", "{\"a\":}", "{a:1}", "{1:1}", "{\"a\"::1}", "{null:1}", "[", "]", "{", "}", "[}",
            "{]",
            "1 2", "{} {}", "[]]", "{}}", "{}x", "1x", "truex", "\"a\"\"b\"", "[]\u{0}", "{}\u{0C}", "{}\u{0B}",
            "\u{0C}{}",
            "\u{0B}1", "\u{A0}1", "1\u{A0}", "1\u{2028}", "[\u{3000}]",
            "[1\u{85}]", "-\u{30}\u{30}",
        ]
        var cases = texts.map(adv28Bytes)
        // Every control character, raw, in a string (and in a name).
        for byte in UInt8(0)...0x1F {
            cases.append([UInt8(ascii: "\"")] + [byte] + [UInt8(ascii: "\"")])
            cases.append(adv28Bytes("{\"") + [byte] + adv28Bytes("\":1}"))
            cases.append(adv28Bytes("\"a\\n") + [byte] + adv28Bytes("\""))  // after an escape: the slow path
        }
        // Every escape letter that RFC 8259 does not name.
        for byte in UInt8(0x20)...0x7E where !Array(#""\/bfnrtu"#.utf8).contains(byte) {
            cases.append(adv28Bytes("\"\\") + [byte] + adv28Bytes("\""))
        }
        let tried = check(cases, invalid, "not RFC 8259 JSON (expected .invalid)")
        print("Adversary28 count: \(tried) invalid-grammar inputs")
        #expect(tried > 150)
    }

    @Test func refusesEveryKindOfInvalidUTF8AsNotUTF8Wherever() {
        let bad: [[UInt8]] = [
            [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0x80],
            [0xF0, 0x8F, 0xBF, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xED, 0xAF, 0xBF, 0xED, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF7, 0xBF, 0xBF, 0xBF],
            [0xF8, 0x88, 0x80, 0x80, 0x80],
            [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], [0xFE], [0xFF], [0x80], [0xBF], [0xC2], [0xE2, 0x82],
            [0xF0, 0x9F, 0x98],
            [0xC2, 0x41], [0xE2, 0x41, 0x82], [0xE2, 0x82, 0x41], [0xF0, 0x9F, 0x41, 0x80], [0xC3, 0xA9, 0x80],
            [0xE0, 0xA0], [0xF4, 0x8F, 0xBF], [0xED, 0x9F],
        ]
        var cases: [[UInt8]] = []
        func q(_ s: String) -> [UInt8] { adv28Bytes(s) }
        for seq in bad {
            cases.append(q("\"") + seq + q("\""))  // in a string, fast path
            cases.append(q("\"ab") + seq + q("cd\""))
            cases.append(q("\"\\n") + seq + q("\""))  // after an escape
            cases.append(q("\"\\u0041xy") + seq + q("z\""))
            cases.append(q("{\"") + seq + q("\":1}"))  // in a name
            cases.append(q("{\"a\\t") + seq + q("\":1}"))
            cases.append(seq)  // alone
            cases.append(seq + q("1"))
            cases.append(q("[") + seq + q("]"))  // outside strings
            cases.append(q("{}") + seq)  // after the value
            cases.append(q("{} ") + seq)
            cases.append(q("\"") + seq)  // in an unterminated string
            cases.append(q("[1,,] \"") + seq + q("\""))  // after a syntax error
            cases.append(q("{\"a\":1,\"a\":2,\"b\":\"") + seq + q("\"}"))  // after a duplicate
            cases.append(q("\"\\q") + seq + q("\""))  // after an invalid escape
            cases.append(q("\"\\uD800") + seq + q("\""))  // after a lone surrogate
            cases.append(
                q(String(repeating: "[", count: 70)) + q("\"") + seq + q("\"") + q(String(repeating: "]", count: 70))
            )
            cases.append(q("1e400 \"") + seq + q("\""))
            cases.append(q("\"") + seq.dropLast(0) + q("\" trailing"))
        }
        // A byte-order mark in front, of valid JSON and of invalid JSON.
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        cases += [
            bom + q("{}"), bom + q("1"), bom + q("\"x\""), bom, bom + q("{"), bom + q("{\"a\":1,\"a\":2}"),
            bom + bom + q("{}"),
        ]
        // Deep nesting past the bound, then a bad byte.
        cases.append(q(String(repeating: "[", count: 100_000)) + [0xFF])
        cases.append([0xFF] + q(String(repeating: "[", count: 100_000)))
        let tried = check(cases, notUTF8, "not UTF-8 (expected .notUTF8)")
        print("Adversary28 count: \(tried) not-UTF-8 inputs")
        #expect(tried > 500)
    }

    @Test func byteOrderMarkOnlyAtTheStartIsNotUTF8() {
        // U+FEFF inside a string is a character RFC 8259 allows; after white space it is not JSON.
        #expect(adv28Read("[\"\u{FEFF}\"]") == .value(.array([.string("\u{FEFF}")])))
        #expect(adv28Read("{\"\u{FEFF}\":1}") == .value(.object(["\u{FEFF}": .number(1)])))
        let afterSpace = adv28Read(" \u{FEFF}{}")
        #expect(afterSpace.isError, "\(afterSpace)")
        let afterValue = adv28Read("{}\u{FEFF}")
        #expect(afterValue.isError, "\(afterValue)")
    }

    @Test func depthBoundIsExactlyMaximumDepth() {
        let max = JOSEJSONReader.maximumDepth
        func arrays(_ n: Int) -> [UInt8] {
            adv28Bytes(String(repeating: "[", count: n) + String(repeating: "]", count: n))
        }
        func objects(_ n: Int) -> [UInt8] {
            adv28Bytes(String(repeating: "{\"a\":", count: n) + "1" + String(repeating: "}", count: n))
        }
        func mixed(_ n: Int) -> [UInt8] {
            var open = ""
            var close = ""
            for i in 0..<n {
                if i % 2 == 0 {
                    open += "[1,"
                    close = "]" + close
                } else {
                    open += "{\"k\":"
                    close = "}" + close
                }
            }
            return adv28Bytes(open + "null" + close)
        }
        for make in [arrays, objects, mixed] {
            let atBound = adv28Read(make(max))
            #expect(!atBound.isError, "depth \(max) must be read: \(atBound)")
            #expect(adv28Read(make(max + 1)) == .error(.invalid), "depth \(max + 1) must be refused")
        }
        #expect(adv28ReadObject(objects(max)).isError == false)
        #expect(adv28ReadObject(objects(max + 1)) == .error(.invalid))
    }

    @Test func hostileNestingNeverOverflowsTheStack() {
        let n = 100_000
        let inputs: [[UInt8]] = [
            adv28Bytes(String(repeating: "[", count: n)),
            adv28Bytes(String(repeating: "[", count: n) + String(repeating: "]", count: n)),
            adv28Bytes(String(repeating: "{\"a\":", count: n)),
            adv28Bytes(String(repeating: "{\"a\":", count: n) + "1" + String(repeating: "}", count: n)),
            adv28Bytes(String(repeating: "[{\"a\":", count: n)),
            adv28Bytes(String(repeating: "[1,", count: n)),
            adv28Bytes("{\"a\":" + String(repeating: "[", count: n)),
        ]
        for input in inputs {
            #expect(adv28Read(input) == .error(.invalid))
            #expect(adv28ReadObject(input).isError)
            let names = JOSEKnownNames(["a", "iss"])
            #expect(adv28ReadKnowing(input, names).0.isError)
        }
        // Wide, not deep: fine.
        let wide = adv28Bytes("[" + Array(repeating: "[]", count: n).joined(separator: ",") + "]")
        if case .value(.array(let items)) = adv28Read(wide) {
            #expect(items.count == n)
        } else {
            Issue.record("wide array refused")
        }
    }

    @Test func duplicatesAtAnyDepthAndAnySpelling() {
        let cases: [String] = [
            #"{"a":1,"a":2}"#, #"{"a":1,"a":1}"#, #"{"a":"x","a":"x"}"#, #"{"a":null,"b":2,"a":{}}"#,
            #"{"x":{"a":1,"a":2}}"#, #"[{"a":1,"a":2}]"#, #"[1,[2,{"b":[{"a":1,"a":2}]}]]"#,
            #"{"a":1,"\u0061":2}"#, #"{"\u0061":1,"\u0061":2}"#, #"{"\u0041":1,"A":2}"#, #"{"/":1,"\/":2}"#,
            #"{"\n":1,"\u000a":2}"#, #"{"\n":1,"\u000A":2}"#, #"{"\uD83D\uDE00":1,"😀":2}"#, #"{"é":1,"\u00e9":2}"#,
            // Canonically equivalent spellings (one name as Swift strings compare).
            "{\"é\":1,\"e\u{0301}\":2}", #"{"é":1,"e\u0301":2}"#, #"{"\u00e9":1,"e\u0301":2}"#,
            "{\"Å\":1,\"\u{212B}\":2}", "{\"K\":1,\"\u{212A}\":2}", #"{"K":1,"\u212A":2}"#, #"{"Kid":1,"\u212Aid":2}"#,
            "{\"\u{1E69}\":1,\"s\u{0323}\u{0307}\":2}", "{\"s\u{0307}\u{0323}\":1,\"s\u{0323}\u{0307}\":2}",
            "{\"\u{0344}\":1,\"\u{0308}\u{0301}\":2}", "{\"한\":1,\"\u{1112}\u{1161}\u{11AB}\":2}",
            #"{"a":{"b":{"c":{"d":1,"d":2}}}}"#,
            String(repeating: "{\"a\":", count: JOSEJSONReader.maximumDepth - 1) + "{\"z\":1,\"z\":2}"
                + String(repeating: "}", count: JOSEJSONReader.maximumDepth - 1),
            "{" + (0..<300).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k150\":0}",
            "{\"" + String(repeating: "x", count: 5000) + "\":1,\"" + String(repeating: "x", count: 4999)
                + "\\u0078\":2}",
        ]
        let tried = check(cases.map(adv28Bytes), duplicate, "a member named twice (expected .duplicateMember)")
        #expect(tried == cases.count)
        // Not duplicates.
        let distinct: [String] = [
            #"{"a":{"a":{"a":1}}}"#, #"[{"a":1},{"a":1}]"#, #"{"a":1,"A":2}"#, #"{"a":1,"a ":2}"#,
            #"{"a":1,"\u0000a":2}"#,
            "{\"ﬁ\":1,\"fi\":2}", "{\"k\":1,\"\u{212A}\":2}", "{\"e\":1,\"e\u{0301}\":2}",
        ]
        for text in distinct { #expect(!adv28Read(text).isError, "\(text)") }
    }

    @Test func readObjectRefusesEveryOtherType() {
        for text in ["[]", "1", "\"x\"", "null", "true", "[{}]", " [ ] "] {
            #expect(adv28ReadObject(adv28Bytes(text)) == .error(.invalid), "\(text)")
        }
        #expect(adv28ReadObject([0xFF]) == .error(.notUTF8))
        #expect(adv28ReadObject(adv28Bytes("[]") + [0xC0, 0x80]) == .error(.notUTF8))
        #expect(adv28ReadObject(adv28Bytes("{\"a\":1,\"a\":1}")) == .error(.duplicateMember))
        #expect(adv28ReadObject(adv28Bytes(" {\"a\" : [1] } ")) == .value(.object(["a": .array([.number(1)])])))
    }

    /// Numbers: the value is the correctly rounded `Double` of the text (as `Double(String)`),
    /// refused (never infinity) when too large.
    @Test func numbersAgreeWithCorrectRounding() {
        var rng = Adv28RNG(seed: 0x28_0001)
        var generator = Adv28Generator(seed: 0x28_0002)
        var tried = 0
        var failures = 0
        for _ in 0..<40_000 {
            let text: String
            if rng.chance(50) {
                text = generator.number().text
            } else {
                // Arbitrary digit strings, also huge exponents and long mantissas.
                var t = rng.chance(40) ? "-" : ""
                if rng.chance(15) {
                    t += "0"
                } else {
                    t += String(rng.int(1...9))
                    for _ in 0..<rng.pick([0, 5, 14, 15, 16, 17, 18, 25, 40, 330]) { t += String(rng.int(0...9)) }
                }
                if rng.chance(50) {
                    t += "."
                    for _ in 0..<rng.int(1...30) { t += String(rng.int(0...9)) }
                }
                if rng.chance(60) { t += "e" + rng.pick(["", "-", "+"]) + String(rng.int(0...400)) }
                text = t
            }
            tried += 1
            let expected = Double(text)!
            let outcome = adv28Read(text)
            let ok =
                expected.isFinite
                ? outcome == .value(.number(expected))
                    && (expected != 0
                        || {
                            if case .value(.number(let v)) = outcome {
                                return v.sign == expected.sign
                            } else {
                                return false
                            }
                        }())
                : outcome == .error(.invalid)
            if !ok {
                failures += 1
                if failures <= 10 { Issue.record("number \(text): Double(text) \(expected), reader \(outcome)") }
            }
        }
        print("Adversary28 count: \(tried) random numbers")
        #expect(failures == 0, "\(failures) of \(tried) numbers differ")
    }

    @Test func nothingButWhiteSpaceAfterTheValue() {
        let values = ["1", "{}", "[]", "\"s\"", "null", "-0.5e3"]
        let trailers = [
            "x", "0", ",", "]", "}", "\"", "/", "\u{0}", "\u{0B}", "\u{0C}", "\u{A0}", "\u{2028}", "\u{3000}",
            "\u{FEFF}", "{}",
        ]
        var tried = 0
        for value in values {
            for trailer in trailers {
                tried += 1
                let outcome = adv28Read(value + " " + trailer)
                #expect(outcome.isError, "\(value.debugDescription) + \(trailer.debugDescription): \(outcome)")
                #expect(
                    outcome != .error(.notUTF8),
                    "valid UTF-8 named not UTF-8: \(value) \(trailer.debugDescription)"
                )
            }
            #expect(!adv28Read(" \t\n\r" + value + " \t\n\r").isError)
        }
        #expect(tried == values.count * trailers.count)
    }
}

/// Number edge cases a digit-counting or exponent-clamping reader gets wrong.
@Suite(
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "pure parsing, thousands of cases: plain swift test runs it; under TSan it would only starve the tests whose subject is timing"
    )
)
struct Adversary28NumberEdgeTests {
    @Test func finiteValuesSpelledWithHugeExponentsOrDigitRuns() {
        let zeros = String(repeating: "0", count: 100_000)
        let cases: [(String, JSONValue?)] = [
            ("0e999", .number(0)), ("-0e999", .number(-0.0)), ("0.0e99999999999999999999", .number(0)),
            ("0." + String(repeating: "0", count: 100) + "1e400", .number(1e299)),
            ("1" + String(repeating: "0", count: 100) + "e-400", .number(1e-300)),
            ("1" + zeros + "e-100000", .number(1)), ("0." + zeros + "1e100001", .number(1)),
            ("1e-99999999999999999999", .number(0)), ("1e99999999999999999999", nil), ("-1e99999999999999999999", nil),
            ("1e9223372036854775807", nil), ("1e9223372036854775808", nil), ("1e18446744073709551616", nil),
            ("1e-9223372036854775808", .number(0)), ("1e-9223372036854775809", .number(0)),
            ("1" + zeros, nil), ("0." + zeros + "5", .number(0)), ("-" + "9" + zeros, nil),
            (
                "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.9999",
                .number(.greatestFiniteMagnitude)
            ),
            // The halfway point between the largest Double and 2^1024 rounds (to even) to infinity.
            (
                "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792",
                nil
            ),
            (
                "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791",
                .number(.greatestFiniteMagnitude)
            ),
            ("2.4703282292062327e-324", .number(0)), ("2.4703282292062328e-324", .number(.leastNonzeroMagnitude)),
        ]
        for (text, expected) in cases {
            let outcome = adv28Read(text)
            let shown = text.count > 60 ? String(text.prefix(30)) + "…(\(text.count) chars)" : text
            // The table agrees with the correctly rounded reading first.
            let reference = Double(text).flatMap { $0.isFinite ? JSONValue.number($0) : nil }
            #expect(reference == expected, "table entry \(shown) disagrees with Double(text)")
            if let expected {
                #expect(
                    outcome == .value(expected),
                    "\(shown): \(outcome), Double(text) \(String(describing: Double(text)))"
                )
                if case .number(let e) = expected, case .value(.number(let v)) = outcome {
                    #expect(e.sign == v.sign, "\(shown) sign")
                }
            } else {
                #expect(outcome == .error(.invalid), "\(shown): \(outcome)")
            }
        }
    }
}

/// Hostile sizes read in bounded time (no quadratic path): generous bounds, debug build.
@Suite(
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "pure parsing, thousands of cases: plain swift test runs it; under TSan it would only starve the tests whose subject is timing"
    )
)
struct Adversary28SizeTests {
    @Test func largeDocumentsReadInBoundedTime() {
        let clock = ContinuousClock()
        let n = 100_000
        let inputs: [(String, [UInt8], Bool)] = [
            ("100k members", adv28Bytes("{" + (0..<n).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}"), true),
            (
                "100k members, last duplicates first",
                adv28Bytes("{" + (0..<n).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + ",\"m0\":0}"), false
            ),
            ("1M escapes", adv28Bytes("\"" + String(repeating: "\\n\\u00e9", count: n * 5) + "\""), true),
            ("2 MB of ASCII", adv28Bytes("\"" + String(repeating: "abcdefghij", count: 200_000) + "\""), true),
            (
                "2 MB ASCII then a bad byte",
                adv28Bytes("\"" + String(repeating: "abcdefghij", count: 200_000)) + [0xFF, 0x22], false
            ),
            ("100k-digit number", adv28Bytes("0." + String(repeating: "7", count: n)), true),
        ]
        for (what, bytes, valid) in inputs {
            let start = clock.now
            let outcome = adv28Read(bytes)
            let elapsed = clock.now - start
            #expect(outcome.isError != valid, "\(what): \(outcome)")
            #expect(elapsed < .seconds(5), "\(what) took \(elapsed)")
        }
        let names = JOSEKnownNames(["iss", "m5"])
        let start = clock.now
        let known = adv28ReadKnowing(inputs[1].1, names).0
        #expect(known == .error(.duplicateMember))
        #expect(clock.now - start < .seconds(5))
    }
}

@Suite(
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "pure parsing, thousands of cases: plain swift test runs it; under TSan it would only starve the tests whose subject is timing"
    )
)
struct Adversary28ByteOrderMarkProbe {
    @Test func whatAByteOrderMarkAfterWhiteSpaceIsCalled() {
        print("Adversary28 probe: ' <BOM>{}' -> \(adv28Read(" \u{FEFF}{}")), '{}<BOM>' -> \(adv28Read("{}\u{FEFF}"))")
    }
}
