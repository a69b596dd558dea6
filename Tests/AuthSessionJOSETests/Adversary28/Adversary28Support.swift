import AuthSessionJOSE
import Foundation

// Shared helpers of the Adversary28 suites: a seeded generator, an outcome type that compares
// reader results, and a UTF-8 oracle independent of the reader.

/// SplitMix64: deterministic, seeded.
struct Adv28RNG: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
}

/// What a read came to.
enum Adv28Outcome: Equatable, CustomStringConvertible {
    case value(JSONValue)
    case error(JOSEJSONError)
    var description: String {
        switch self {
        case .value(let value): "value(\(value))"
        case .error(let error): "error(\(error))"
        }
    }
    var isError: Bool { if case .error = self { true } else { false } }
}

func adv28Read(_ bytes: [UInt8]) -> Adv28Outcome {
    do { return .value(try JSONValue.read(bytes)) } catch { return .error(error) }
}

func adv28Read(_ text: String) -> Adv28Outcome { adv28Read(Array(text.utf8)) }

func adv28ReadObject(_ bytes: [UInt8]) -> Adv28Outcome {
    do { return .value(.object(try JSONValue.readObject(bytes))) } catch { return .error(error) }
}

/// `readObject(_:knowing:)`'s result folded back into one dictionary (with a check that no name
/// is in two places), so it compares with `readObject(_:)`.
func adv28ReadKnowing(_ bytes: [UInt8], _ names: JOSEKnownNames) -> (Adv28Outcome, partitionOK: Bool) {
    let object: JOSEObject
    do { object = try JSONValue.readObject(bytes, knowing: names) } catch { return (.error(error), true) }
    var all: [String: JSONValue] = [:]
    var ok = object.known.count == names.names.count
    for (index, value) in object.known.enumerated() where index < names.names.count {
        if let value { all[names.names[index]] = value }
    }
    for (name, value) in object.otherStrings {
        if all[name] != nil || names.names.contains(name) { ok = false }
        all[name] = .string(value)
    }
    for (name, value) in object.otherValues {
        if all[name] != nil || names.names.contains(name) { ok = false }
        if case .string = value { ok = false }
        all[name] = value
    }
    return (.value(.object(all)), ok)
}

/// UTF-8 without a byte-order mark, by the standard library's validator (not the reader's).
func adv28IsUTF8(_ bytes: [UInt8]) -> Bool {
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return false }
    return String(validating: bytes, as: UTF8.self) != nil
}

func adv28Bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Bytes from a string with `\xHH` placeholders spelled as `«HH»`, so invalid UTF-8 reads clearly.
func adv28Raw(_ spec: String) -> [UInt8] {
    var out: [UInt8] = []
    var scalars = Array(spec.unicodeScalars)[...]
    while let first = scalars.first {
        if first == "«", let close = scalars.firstIndex(of: "»") {
            let hex = String(String.UnicodeScalarView(scalars[(scalars.startIndex + 1)..<close]))
            out.append(UInt8(hex, radix: 16)!)
            scalars = scalars[(close + 1)...]
        } else {
            out.append(contentsOf: Array(String(first).utf8))
            scalars = scalars.dropFirst()
        }
    }
    return out
}

func adv28Hex(_ bytes: [UInt8], limit: Int = 160) -> String {
    let shown = bytes.prefix(limit).map { byte -> String in
        if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") { return String(UnicodeScalar(byte)) }
        return String(format: "\\x%02X", byte)
    }.joined()
    return bytes.count > limit ? shown + "…(\(bytes.count) bytes)" : shown
}

// MARK: - Random valid JSON, with its expected value

/// A generated JSON value: the text it was written as and the value it must read as.
indirect enum Adv28Gen {
    case null
    case bool(Bool)
    case number(text: String, value: Double)
    case string(String)
    case array([Adv28Gen])
    case object([(String, Adv28Gen)])

    var expected: JSONValue {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number(_, let value): .number(value)
        case .string(let value): .string(value)
        case .array(let items): .array(items.map(\.expected))
        case .object(let members):
            .object(Dictionary(members.map { ($0.0, $0.1.expected) }, uniquingKeysWith: { a, _ in a }))
        }
    }
}

struct Adv28Generator {
    var rng: Adv28RNG
    /// Probability weights for nested containers shrink with depth.
    var maxDepth = 6

    init(seed: UInt64) { rng = Adv28RNG(seed: seed) }

    mutating func whitespace() -> String {
        guard rng.chance(35) else { return "" }
        var text = ""
        for _ in 0..<rng.int(1...3) { text += rng.pick([" ", "\t", "\n", "\r", "\r\n"]) }
        return text
    }

    mutating func scalar() -> Unicode.Scalar {
        switch rng.int(0...11) {
        case 0...3: return Unicode.Scalar(UInt8(rng.int(0x20...0x7E)))
        case 4: return Unicode.Scalar(UInt8(rng.int(0x00...0x1F)))
        case 5: return Unicode.Scalar(UInt32(rng.int(0x80...0x7FF)))!
        case 6:
            let value = UInt32(rng.int(0x800...0xFFFF))
            return Unicode.Scalar(value) ?? "\u{FFFD}"
        case 7: return Unicode.Scalar(UInt32(rng.int(0x10000...0x10FFFF)))!
        case 8:
            return rng.pick([
                "\u{FEFF}", "\u{2028}", "\u{2029}", "\u{FFFF}", "\u{FFFE}", "\u{10FFFF}", "\u{7F}", "\u{0}",
                "\u{1F600}", "\u{0301}", "\u{212A}", "\u{E000}", "\u{D7FF}",
            ])
        case 9: return rng.pick(["\"", "\\", "/"])
        default: return rng.pick(["a", "b", "z", "0", " ", "é", "\u{0301}"])
        }
    }

    /// The JSON spelling of one scalar: raw when allowed, else (or by chance) escaped.
    mutating func spell(_ scalar: Unicode.Scalar) -> String {
        let value = scalar.value
        let mustEscape = value < 0x20 || scalar == "\"" || scalar == "\\"
        if !mustEscape && rng.chance(70) { return String(scalar) }
        if rng.chance(50) {
            switch scalar {
            case "\"": return "\\\""
            case "\\": return "\\\\"
            case "/": return "\\/"
            case "\u{08}": return "\\b"
            case "\u{0C}": return "\\f"
            case "\n": return "\\n"
            case "\r": return "\\r"
            case "\t": return "\\t"
            default: break
            }
        }
        let upper = rng.chance(50)
        func hex4(_ unit: UInt32) -> String {
            let text = String(unit, radix: 16, uppercase: upper)
            return "\\u" + String(repeating: "0", count: 4 - text.count) + text
        }
        if value >= 0x10000 {
            let v = value - 0x10000
            return hex4(0xD800 + (v >> 10)) + hex4(0xDC00 + (v & 0x3FF))
        }
        return hex4(value)
    }

    mutating func stringContent(maxLength: Int = 12) -> (value: String, text: String) {
        var value = String.UnicodeScalarView()
        var text = ""
        for _ in 0..<rng.int(0...maxLength) {
            let s = scalar()
            value.append(s)
            text += spell(s)
        }
        return (String(value), text)
    }

    mutating func number() -> (text: String, value: Double) {
        while true {
            var text = rng.chance(30) ? "-" : ""
            if rng.chance(20) {
                text += "0"
            } else {
                text += String(rng.int(1...9))
                for _ in 0..<rng.pick([0, 0, 1, 2, 3, 5, 8, 14, 15, 16, 17, 19, 22]) { text += String(rng.int(0...9)) }
            }
            if rng.chance(35) {
                text += "."
                for _ in 0..<rng.pick([1, 1, 2, 3, 6, 10, 17, 20]) { text += String(rng.int(0...9)) }
            }
            if rng.chance(25) {
                text += rng.pick(["e", "E"]) + rng.pick(["", "+", "-"])
                text += String(rng.pick([0, 1, 2, 5, 9, 10, 22, 23, 100, 300, 307, 308, 320, 330]))
                if rng.chance(10) { text = text.replacingOccurrences(of: "e", with: "e0") }
            }
            if let value = Double(text), value.isFinite { return (text, value) }
        }
    }

    /// A value and its text. `depth` counts enclosing containers.
    mutating func value(depth: Int = 0) -> (Adv28Gen, String) {
        let containerChance = depth >= maxDepth ? 0 : max(10, 60 - depth * 12)
        if rng.chance(containerChance) {
            if rng.chance(50) {
                var items: [Adv28Gen] = []
                var parts: [String] = []
                for _ in 0..<rng.int(0...5) {
                    let (gen, text) = value(depth: depth + 1)
                    items.append(gen)
                    parts.append(whitespace() + text + whitespace())
                }
                let inner = parts.isEmpty ? whitespace() : parts.joined(separator: ",")
                return (.array(items), "[" + inner + "]")
            } else {
                var members: [(String, Adv28Gen)] = []
                var parts: [String] = []
                for _ in 0..<rng.int(0...5) {
                    var name: (value: String, text: String)
                    repeat {
                        name = stringContent(maxLength: 6)
                    } while members.contains(where: { $0.0 == name.value })
                    let (gen, text) = value(depth: depth + 1)
                    members.append((name.value, gen))
                    parts.append(
                        whitespace() + "\"" + name.text + "\"" + whitespace() + ":" + whitespace() + text + whitespace()
                    )
                }
                let inner = parts.isEmpty ? whitespace() : parts.joined(separator: ",")
                return (.object(members), "{" + inner + "}")
            }
        }
        switch rng.int(0...5) {
        case 0: return (.null, "null")
        case 1:
            let b = rng.chance(50)
            return (.bool(b), b ? "true" : "false")
        case 2, 3:
            let (text, value) = number()
            return (.number(text: text, value: value), text)
        default:
            let (value, text) = stringContent()
            return (.string(value), "\"" + text + "\"")
        }
    }

    mutating func document(topLevelObject: Bool = false) -> (Adv28Gen, String) {
        var result: (Adv28Gen, String)
        repeat {
            result = value()
        } while topLevelObject && { if case .object = result.0 { false } else { true } }()
        return (result.0, whitespace() + result.1 + whitespace())
    }
}

/// Foundation's reading, checked against the generator's tree (JSONSerialization on Linux gives
/// NSNumber for both booleans and numbers: the tree says which one it must be). `nil` when equal,
/// else the first difference.
func adv28CompareFoundation(_ any: Any, _ gen: Adv28Gen, imprecise: inout Int, path: String = "$") -> String? {
    switch gen {
    case .null:
        return any is NSNull ? nil : "\(path): expected null, Foundation \(type(of: any))"
    case .bool(let value):
        if let b = any as? Bool, b == value { return nil }
        if let n = any as? NSNumber, n.boolValue == value { return nil }
        return "\(path): expected bool \(value), Foundation \(any)"
    case .number(let text, let value):
        guard let n = any as? NSNumber else { return "\(path): expected number \(text), Foundation \(type(of: any))" }
        if n.doubleValue == value { return nil }
        // Foundation on Linux does not round every decimal correctly: a difference of up to
        // 1e-13 relative is Foundation's, counted apart (the reader is checked against
        // `Double(String)`, which is correctly rounded).
        if abs(n.doubleValue - value) <= abs(value) * 1e-13 {
            imprecise += 1
            return nil
        }
        return "\(path): number \(text): Double(text) \(value), Foundation \(n.doubleValue)"
    case .string(let value):
        guard let s = any as? String else { return "\(path): expected string, Foundation \(type(of: any))" }
        if s == value { return nil }
        // swift-corelibs-foundation drops a raw U+FEFF that starts a run of a string's text (at
        // the start, or right after an escape): Foundation's fault, counted apart.
        if adv28StripFEFF(s) == adv28StripFEFF(value) {
            imprecise += 1_000_000
            return nil
        }
        return "\(path): string \(value.debugDescription) vs Foundation \(s.debugDescription)"
    case .array(let items):
        guard let array = any as? [Any], array.count == items.count else { return "\(path): array differs" }
        for (index, item) in items.enumerated() {
            if let difference = adv28CompareFoundation(
                array[index],
                item,
                imprecise: &imprecise,
                path: "\(path)[\(index)]"
            ) {
                return difference
            }
        }
        return nil
    case .object(let members):
        if let dictionary = any as? [String: Any], dictionary.count != members.count,
            members.contains(where: { $0.0.unicodeScalars.contains("\u{FEFF}") })
        {
            // Foundation dropped U+FEFF from names, and two names became one: its fault.
            imprecise += 1_000_000
            return nil
        }
        guard let dictionary = any as? [String: Any], dictionary.count == members.count else {
            let theirs = (any as? [String: Any]).map {
                $0.keys.map { Array($0.unicodeScalars).map { String($0.value, radix: 16) } }
            }
            return
                "\(path): object differs (\(type(of: any))): model names \(members.map { Array($0.0.unicodeScalars).map { String($0.value, radix: 16) } }), Foundation names \(String(describing: theirs))"
        }
        let stripped = Dictionary(
            dictionary.map { (adv28StripFEFF($0.key), $0.value) },
            uniquingKeysWith: { a, _ in a }
        )
        for (name, member) in members {
            var found = dictionary[name]
            if found == nil, let other = stripped[adv28StripFEFF(name)] {
                imprecise += 1_000_000
                found = other
            }
            guard let found else { return "\(path): missing member \(name.debugDescription)" }
            if let difference = adv28CompareFoundation(
                found,
                member,
                imprecise: &imprecise,
                path: "\(path).\(name.debugDescription)"
            ) {
                return difference
            }
        }
        return nil
    }
}

func adv28FoundationReads(_ bytes: [UInt8]) -> Any? {
    try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}

func adv28StripFEFF(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\u{FEFF}" }))
}
