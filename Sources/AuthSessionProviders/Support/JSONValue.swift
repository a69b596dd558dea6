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
