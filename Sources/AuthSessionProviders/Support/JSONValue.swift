import Foundation

/// A JSON value read without a schema, for answers whose fields must be checked one by one
/// (a hostile server may send any type anywhere).
///
/// All operations are thread-safe.
package enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Decodes `data` as one JSON value.
    ///
    /// - Throws: `DecodingError` for anything but valid JSON in UTF-8.
    package static func decode(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    package var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    package var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    package var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }
}

extension Dictionary where Key == String, Value == JSONValue {

    /// The members whose value is a string and whose name is not in `excluded`: the profile
    /// claims of an ID token or a userinfo answer.
    package func stringMembers(excluding excluded: Set<String>) -> [String: String] {
        var members: [String: String] = [:]
        for (name, value) in self where !excluded.contains(name) {
            if let text = value.stringValue {
                members[name] = text
            }
        }
        return members
    }
}

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), as JWTs and PKCE use it.
package enum Base64URL {

    /// Encodes `data` without padding.
    package static func encode(_ data: some Sequence<UInt8>) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url text in its one canonical form: the URL-safe alphabet only (no `+`, `/`
    /// or padding) and unused trailing bits zero; `nil` for anything else. So one value has one
    /// text: a token's parts cannot be re-spelled into another token string that still verifies
    /// (an ECDSA signature keeps its two valid forms, `s` and `n - s`, as ECDSA has).
    package static func decode(_ text: some StringProtocol) -> Data? {
        let text = String(text)
        guard !text.contains(where: { $0 == "+" || $0 == "/" || $0 == "=" }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        switch base64.utf8.count % 4 {
        case 2: base64 += "=="
        case 3: base64 += "="
        case 1: return nil
        default: break
        }
        guard let data = Data(base64Encoded: base64), encode(data) == text else { return nil }
        return data
    }
}

extension JSONValue {

    /// Whether an object anywhere in `data` (valid JSON, as ``decode(_:)`` accepts) names a
    /// member twice, the names compared after their escapes are read (`"a"` and `"\u0061"` are
    /// one name).
    ///
    /// `JSONDecoder` keeps one of the two silently; a JWS header or claims set with a duplicate
    /// must be refused instead (RFC 7515 §5.2), or a reader could see another value than the one
    /// the signer meant.
    /// Whether `data` is JSON text as JOSE (RFC 7515 section 4, RFC 7519 section 7.2) and RFC 8259
    /// (section 8.1) have it: UTF-8, without a byte-order mark. A decoder that also reads UTF-16
    /// and UTF-32 would read a header the duplicate check (which reads UTF-8) did not.
    package static func isUTF8Text(_ data: Data) -> Bool {
        guard !data.starts(with: [0xEF, 0xBB, 0xBF]) else { return false }
        return String(decoding: data, as: UTF8.self).utf8.elementsEqual(data)
    }

    package static func hasDuplicateMembers(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        /// One open object or array: the names an object has seen (as Swift strings, compared as
        /// the decoded dictionary's keys are: canonically equivalent spellings are one name), and
        /// whether a name comes next.
        var stack: [(isObject: Bool, names: Set<String>, expectsName: Bool)] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                stack.append((true, [], true))
                index += 1
            case UInt8(ascii: "["):
                stack.append((false, [], false))
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
                index += 1
            case UInt8(ascii: ","):
                if let last = stack.indices.last, stack[last].isObject { stack[last].expectsName = true }
                index += 1
            case UInt8(ascii: "\""):
                let (text, end) = string(in: bytes, from: index + 1)
                if let last = stack.indices.last, stack[last].isObject, stack[last].expectsName {
                    guard stack[last].names.insert(String(decoding: text, as: UTF8.self)).inserted else { return true }
                    stack[last].expectsName = false
                }
                index = end
            default:
                index += 1
            }
        }
        return false
    }

    /// The bytes of the JSON string whose contents start at `start` (after its opening quote),
    /// escapes read (`\uXXXX` as the UTF-8 of its code unit or surrogate pair), and the index after
    /// its closing quote.
    private static func string(in bytes: [UInt8], from start: Int) -> (text: [UInt8], end: Int) {
        var text: [UInt8] = []
        var index = start
        var units: [UInt16] = []
        func flushUnits() {
            guard !units.isEmpty else { return }
            for scalar in UTF16.decode(units) { text += Array(String(scalar).utf8) }
            units = []
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flushUnits()
                return (text, index + 1)
            }
            guard byte == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                flushUnits()
                text.append(byte)
                index += 1
                continue
            }
            let escaped = bytes[index + 1]
            if escaped == UInt8(ascii: "u"), index + 5 < bytes.count,
                let unit = UInt16(String(decoding: bytes[(index + 2)...(index + 5)], as: UTF8.self), radix: 16)
            {
                units.append(unit)
                index += 6
                continue
            }
            flushUnits()
            switch escaped {
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "t"): text.append(0x09)
            default: text.append(escaped)  // `"`, `\`, `/`
            }
            index += 2
        }
        flushUnits()
        return (text, index)
    }
}

extension UTF16 {

    /// The scalars `units` spell; a lone surrogate as U+FFFD.
    fileprivate static func decode(_ units: [UInt16]) -> [Unicode.Scalar] {
        var scalars: [Unicode.Scalar] = []
        var iterator = units.makeIterator()
        var decoder = UTF16()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .error: scalars.append("\u{FFFD}")
            case .emptyInput: return scalars
            }
        }
    }
}
