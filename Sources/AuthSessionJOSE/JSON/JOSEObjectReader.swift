import Foundation

/// Member names a reader of one kind of JOSE object knows (the registered claims of an ID token,
/// say): read by ``JSONValue/readObject(_:knowing:)`` into slots by index, compared as bytes, with
/// no string made and no hash computed for them.
///
/// Names are ASCII letters, digits, `_` and `-` only, not `K`: no other spelling of such a name is
/// one name with it as Swift strings compare (canonical equivalence maps U+212A KELVIN SIGN to `K`,
/// and no character to another of these), so a member named with an escape or another spelling
/// is the same known name or none, and duplicates are found as a dictionary would find them.
///
/// All operations are thread-safe.
package struct JOSEKnownNames: Sendable {

    /// The names, in slot order.
    package let names: [String]

    /// Each name's UTF-8 and count packed into an integer (at most 7 bytes), or `nil` for a longer name.
    private let packed: [UInt64?]

    /// The names too long to pack: their UTF-8 and slots.
    private let long: [(bytes: [UInt8], slot: Int)]

    /// Names with the given slots' order.
    ///
    /// - Parameter names: Distinct names of ASCII letters (not `K`), digits, `_` and `-`.
    package init(_ names: [String]) {
        precondition(Set(names).count == names.count, "known names are distinct")
        precondition(
            names.allSatisfy { name in
                !name.isEmpty
                    && name.utf8.allSatisfy { byte in
                        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte != UInt8(ascii: "K"))
                            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                    }
            },
            "known names are ASCII letters (not K), digits, _ and -"
        )
        self.names = names
        packed = names.map { name in
            let bytes = Array(name.utf8)
            return bytes.withUnsafeBufferPointer { Self.pack($0) }
        }
        long = names.enumerated().filter { $0.element.utf8.count > 7 }.map { (Array($0.element.utf8), $0.offset) }
    }

    /// The slot of the name spelled by `bytes` (escapes read), or `nil` for another name.
    package func slot(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        if let key = Self.pack(bytes) {
            return packed.firstIndex(of: key)
        }
        for name in long where name.bytes.count == bytes.count {
            let isEqual = name.bytes.withUnsafeBufferPointer { known in
                memcmp(known.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
            if isEqual { return name.slot }
        }
        return nil
    }

    /// Up to 8 bytes and their count in one integer: equal integers, equal bytes.
    private static func pack(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard bytes.count <= 7 else { return nil }
        var key = UInt64(bytes.count)
        for byte in bytes {
            key = key << 8 | UInt64(byte)
        }
        return key
    }
}

/// A JSON object read with known names: their values in slots, every other member by name.
///
/// All operations are thread-safe.
package struct JOSEObject: Sendable {

    /// The known names' values, by slot; `nil` for a name the object does not have.
    package var known: [JSONValue?]

    /// The members whose names are not known and whose values are strings (an ID token's
    /// profile claims, say).
    package var otherStrings: [String: String]

    /// The members whose names are not known and whose values are not strings.
    package var otherValues: [String: JSONValue]
}

extension JSONValue {

    /// Reads `bytes` as a JSON object, strictly (``read(_:)``), the members named in `names` put
    /// in slots without hashing: a member named twice, known or not, is
    /// ``JOSEJSONError/duplicateMember``.
    ///
    /// - Throws: ``JOSEJSONError``, as ``read(_:)`` does; a value of another type than an object
    ///   is ``JOSEJSONError/invalid``.
    package static func readObject(
        _ bytes: [UInt8],
        knowing names: JOSEKnownNames
    ) throws(JOSEJSONError) -> JOSEObject {
        let read = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JOSEJSONError) in try JOSEJSONReader.readObject(buffer, knowing: names) }
        }
        switch read {
        case .success(let object): return object
        case .failure(let error): throw isUTF8(bytes) ? error : .notUTF8
        }
    }
}
