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

    /// Decodes `data` as one JSON value, leniently (`JSONDecoder`): for a server's HTTP answers.
    /// A JOSE document is read with ``read(_:)``.
    ///
    /// - Throws: `DecodingError` for anything but valid JSON in UTF-8.
    package static func decode(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Reads `bytes` as one JSON value, strictly, as a JOSE document must be (``JOSEJSONReader``).
    ///
    /// - Throws: ``JOSEJSONError``: ``JOSEJSONError/notUTF8`` for any input that is not UTF-8,
    ///   whatever else is wrong with it, then ``JOSEJSONError/duplicateMember`` or
    ///   ``JOSEJSONError/invalid``.
    package static func read(_ bytes: [UInt8]) throws(JOSEJSONError) -> JSONValue {
        do {
            return try JOSEJSONReader.read(bytes)
        } catch {
            throw isUTF8(bytes) ? error : .notUTF8
        }
    }

    /// Whether `bytes` are UTF-8 without a byte-order mark. The error path alone checks the whole
    /// input's encoding, so that "not UTF-8" wins wherever the bad byte is (the reader stops at
    /// the first fault it meets).
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        !bytes.starts(with: [0xEF, 0xBB, 0xBF]) && String(decoding: bytes, as: UTF8.self).utf8.elementsEqual(bytes)
    }

    /// Reads `bytes` as a JSON object, strictly (``read(_:)``); a value of another type is
    /// ``JOSEJSONError/invalid``.
    package static func readObject(_ bytes: [UInt8]) throws(JOSEJSONError) -> [String: JSONValue] {
        // Another type is refused before it is read: a duplicate inside an array is not what is
        // wrong with a document that is not an object (the reader with known names agrees).
        guard let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == UInt8(ascii: "{")
        else { throw isUTF8(bytes) ? .invalid : .notUTF8 }
        guard case .object(let object) = try read(bytes) else { throw .invalid }
        return object
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
