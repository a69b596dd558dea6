import AuthSessionJOSE
import Foundation
import Testing

/// Promise 1 (second half): `readObject(_:knowing:)` finds every duplicate `readObject(_:)` finds,
/// known or not, however spelled, and refuses exactly the documents `readObject(_:)` refuses.
@Suite(
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "pure parsing, thousands of cases: plain swift test runs it; under TSan it would only starve the tests whose subject is timing"
    )
)
struct Adversary28KnownNamesTests {

    static let names = JOSEKnownNames([
        "iss", "sub", "aud", "exp", "iat", "nbf", "nonce", "azp", "auth_time", "at_hash", "c_hash", "sid",
        "x-very-long-claim_name-1", "ab", "a", "abcdefg", "abcdefgh", "abcdefghi", "Z9_-",
    ])

    /// Every spelling of `name` with one or more characters as `\u` escapes (lower and upper hex).
    private func spellings(_ name: String) -> [String] {
        let scalars = Array(name.unicodeScalars)
        var out: [String] = []
        func esc(_ s: Unicode.Scalar, upper: Bool) -> String {
            let h = String(s.value, radix: 16, uppercase: upper)
            return "\\u" + String(repeating: "0", count: 4 - h.count) + h
        }
        for i in scalars.indices {
            for upper in [false, true] {
                var text = ""
                for (j, s) in scalars.enumerated() { text += j == i ? esc(s, upper: upper) : String(s) }
                out.append(text)
            }
        }
        out.append(scalars.map { esc($0, upper: false) }.joined())
        if name.contains("/") { out.append(name.replacingOccurrences(of: "/", with: "\\/")) }
        return out
    }

    @Test func aKnownNameAndItsEscapedSpellingAreOneName() {
        var tried = 0
        for name in Self.names.names {
            let values = ["\"v\"", "1", "null", "{}", "[\"x\"]", "true"]
            for spelling in spellings(name) {
                for (first, second) in [(name, spelling), (spelling, name), (spelling, spelling)] {
                    for value in [values[tried % values.count], "\"s\""] {
                        tried += 1
                        let text = "{\"\(first)\":\(value),\"other\":2,\"\(second)\":\(value)}"
                        let (outcome, _) = adv28ReadKnowing(adv28Bytes(text), Self.names)
                        #expect(outcome == .error(.duplicateMember), "\(text): \(outcome)")
                        #expect(adv28ReadObject(adv28Bytes(text)) == .error(.duplicateMember), "\(text)")
                    }
                }
                // Read alone, an escaped known name lands in its slot.
                tried += 1
                let single = "{\"\(spelling)\":\"v\"}"
                do {
                    let object = try JSONValue.readObject(adv28Bytes(single), knowing: Self.names)
                    let slot = Self.names.names.firstIndex(of: name)!
                    #expect(object.known[slot] == .string("v"), "\(single) not in its slot")
                    #expect(object.otherStrings.isEmpty && object.otherValues.isEmpty, "\(single) also elsewhere")
                } catch {
                    Issue.record("\(single): \(error)")
                }
            }
        }
        print("Adversary28 count: \(tried) known-name spelling cases")
        #expect(tried > 300)
    }

    @Test func unknownNamesTwiceWhateverTheirValues() {
        let values = ["\"a\"", "\"\"", "1", "null", "true", "{}", "[]", "{\"q\":\"r\"}", "[\"s\"]"]
        let pairs: [(String, String)] = [
            ("name", "name"), ("name", "n\\u0061me"), ("name", "\\u006e\\u0061\\u006d\\u0065"),
            ("é", "e\u{0301}"), ("é", "\\u00e9"), ("é", "e\\u0301"), ("Kelvin", "\\u212Aelvin"),
            ("Kelvin", "\u{212A}elvin"),
            ("Kid", "\\u212Aid"), ("\u{212B}", "Å"),
            ("x-very-long-unknown-name-1234567890", "x-very-long-unknown-name-123456789\\u0030"),
            ("ISS", "\\u0049SS"), ("iss ", "iss\\u0020"), ("", ""),
        ]
        var tried = 0
        for (a, b) in pairs {
            for first in values {
                for second in values {
                    tried += 1
                    let text = "{\"\(a)\":\(first),\"\(b)\":\(second)}"
                    let (outcome, _) = adv28ReadKnowing(adv28Bytes(text), Self.names)
                    #expect(outcome == .error(.duplicateMember), "\(text): \(outcome)")
                    #expect(adv28ReadObject(adv28Bytes(text)) == .error(.duplicateMember), "\(text)")
                }
            }
        }
        #expect(tried == pairs.count * values.count * values.count)
    }

    @Test func nestedDuplicatesInsideKnownAndUnknownMembers() {
        let texts = [
            #"{"iss":{"a":1,"a":2}}"#, #"{"aud":[{"x":1,"\u0078":2}]}"#, #"{"other":{"iss":1,"\u0069ss":2}}"#,
            #"{"other":"s","nest":[[{"k":{"z":1,"z":2}}]]}"#, #"{"exp":1,"o":{"exp":1,"exp":2}}"#,
        ]
        for text in texts {
            #expect(adv28ReadKnowing(adv28Bytes(text), Self.names).0 == .error(.duplicateMember), "\(text)")
        }
        // Same name in different objects is fine; values land where they should.
        let ok = #"{"iss":"i","aud":["c"],"exp":1,"name":"n","o":{"iss":2},"\u0073ub":"s","arr":[1]}"#
        do {
            let object = try JSONValue.readObject(adv28Bytes(ok), knowing: Self.names)
            let n = Self.names.names
            #expect(object.known[n.firstIndex(of: "iss")!] == .string("i"))
            #expect(object.known[n.firstIndex(of: "sub")!] == .string("s"))
            #expect(object.known[n.firstIndex(of: "aud")!] == .array([.string("c")]))
            #expect(object.known[n.firstIndex(of: "exp")!] == .number(1))
            #expect(object.known[n.firstIndex(of: "nonce")!] == nil)
            #expect(object.otherStrings == ["name": "n"])
            #expect(object.otherValues == ["o": .object(["iss": .number(2)]), "arr": .array([.number(1)])])
        } catch {
            Issue.record("\(ok): \(error)")
        }
    }

    @Test func aKnownNameSpelledAsAnotherIsNotIt() {
        // Prefixes, case, long-name neighbours: distinct names, not slots of the known ones.
        let text =
            #"{"is":1,"isss":2,"ISS":3,"abcdefgH":4,"abcdefghij":5,"x-very-long-claim_name-2":6,"a\u0000":7,"abcdefg\u0000":8,"iss\u0000":9,"\u0000iss":10,"x-very-long-claim_name-1\u0000":11}"#
        let (outcome, partitionOK) = adv28ReadKnowing(adv28Bytes(text), Self.names)
        #expect(outcome == adv28ReadObject(adv28Bytes(text)))
        #expect(partitionOK)
        if case .value(.object(let all)) = outcome { #expect(all.count == 11) } else { Issue.record("\(outcome)") }
        let object = try? JSONValue.readObject(adv28Bytes(text), knowing: Self.names)
        #expect(object?.known.allSatisfy { $0 == nil } == true, "a distinct name took a known slot")
    }

    @Test func notUTF8WinsAndDepthIsBoundedAsInRead() {
        let bad: [[UInt8]] = [
            adv28Raw(#"{"iss":1,"iss":2,"x":"«FF»"}"#), adv28Raw(#"{"iss":1,"\u0069ss":2} «C0»«80»"#),
            adv28Raw(#"[1,] "«ED»«A0»«80»""#), adv28Raw(#"«EF»«BB»«BF»{"iss":"a"}"#),
            adv28Raw(#"{"«F4»«90»«80»«80»":1}"#),
            adv28Raw(#"{"name":"a","name":"«E2»«82»"}"#), adv28Raw(#"{"iss":"\uD800«80»"}"#),
        ]
        for bytes in bad {
            #expect(adv28ReadKnowing(bytes, Self.names).0 == .error(.notUTF8), "\(adv28Hex(bytes))")
        }
        let max = JOSEJSONReader.maximumDepth
        func objects(_ n: Int, _ name: String) -> [UInt8] {
            adv28Bytes(String(repeating: "{\"\(name)\":", count: n) + "1" + String(repeating: "}", count: n))
        }
        for name in ["iss", "zzz"] {
            #expect(!adv28ReadKnowing(objects(max, name), Self.names).0.isError, "depth \(max) via \(name)")
            #expect(
                adv28ReadKnowing(objects(max + 1, name), Self.names).0 == .error(.invalid),
                "depth \(max + 1) via \(name)"
            )
        }
    }

    /// Both object readers document "a value of another type than an object is `.invalid`"; a
    /// non-object holding a duplicate must be named alike by both.
    @Test func errorKindForANonObjectWithADuplicateInside() {
        for text in [#"[{"a":1,"a":2}]"#, #"[{"iss":1,"iss":2}]"#, #"[1,{"x":{"b":1,"b":1}}]"#] {
            let bytes = adv28Bytes(text)
            let plain = adv28ReadObject(bytes)
            let knowing = adv28ReadKnowing(bytes, Self.names).0
            #expect(plain == knowing, "\(text): readObject(_:) \(plain), readObject(_:knowing:) \(knowing)")
            #expect(adv28Read(bytes) == .error(.duplicateMember))
        }
    }

    /// Random objects whose names come from a small pool of known and unknown names and their
    /// spellings (many duplicates), with random valid or invalid structure: both readers agree.
    @Test func agreesWithReadObjectOnRandomDocuments() {
        var rng = Adv28RNG(seed: 0x28_0100)
        var gen = Adv28Generator(seed: 0x28_0101)
        gen.maxDepth = 3
        let poolNames = [
            "iss", "\\u0069ss", "i\\u0073s", "sub", "su\\u0062", "aud", "exp", "nonce", "non\\u0063e",
            "auth_time", "auth\\u005ftime", "x-very-long-claim_name-1", "x-very-long-claim_name-\\u0031",
            "abcdefgh", "abcdefg\\u0068", "name", "n\\u0061me", "é", "e\\u0301", "e\u{0301}", "\\u00e9",
            "Kid", "\\u212Aid", "kid", "picture", "pict\\u0075re", "a", "\\u0061", "ab", "Z9_-", "Z9_\\u002d",
        ]
        var tried = 0
        var refused = 0
        var duplicates = 0
        var mismatches = 0
        for _ in 0..<20_000 {
            var parts: [String] = []
            for _ in 0..<rng.int(0...6) {
                let name = rng.pick(poolNames)
                let value = rng.chance(40) ? "\"" + gen.stringContent(maxLength: 4).text + "\"" : gen.value(depth: 1).1
                parts.append("\"\(name)\":\(value)")
            }
            var bytes = adv28Bytes("{" + parts.joined(separator: ",") + "}")
            if rng.chance(15), !bytes.isEmpty {  // an invalid mutation
                let i = rng.int(0...(bytes.count - 1))
                switch rng.int(0...2) {
                case 0: bytes.remove(at: i)
                case 1: bytes.insert(UInt8(rng.int(0...255)), at: i)
                default: bytes[i] = UInt8(rng.int(0...255))
                }
            }
            tried += 1
            let plain = adv28ReadObject(bytes)
            let (known, partitionOK) = adv28ReadKnowing(bytes, Self.names)
            if plain.isError { refused += 1 }
            if plain == .error(.duplicateMember) { duplicates += 1 }
            if plain != known || !partitionOK {
                mismatches += 1
                if mismatches <= 10 {
                    Issue.record(
                        "readObject \(plain) vs knowing \(known) (partition ok: \(partitionOK)) for \(adv28Hex(bytes))"
                    )
                }
            }
        }
        print(
            "Adversary28 count: \(tried) random objects (\(refused) refused, \(duplicates) duplicates) for readObject agreement"
        )
        #expect(mismatches == 0, "\(mismatches) of \(tried) documents read differently")
        #expect(duplicates > 1000 && refused > duplicates)
    }
}
