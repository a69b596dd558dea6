import Foundation

/// Why bytes are not a JOSE JSON document. Names no byte of the input: a header or a claim may
/// carry anything.
///
/// All operations are thread-safe.
package enum JOSEJSONError: Error, Sendable, Hashable {

    /// Not UTF-8 (a byte-order mark included: RFC 8259 §8.1 forbids one in JSON text).
    case notUTF8

    /// An object names a member twice, compared after escapes are read: RFC 7515 §5.2 and RFC 7517
    /// §4 ask a JOSE reader to refuse it rather than keep one of the two.
    case duplicateMember

    /// Not one JSON value as RFC 8259 spells it (with only white space after it), a number too
    /// large for a `Double`, or nested deeper than ``JOSEJSONReader/maximumDepth``.
    case invalid
}

/// A strict JSON reader for JOSE documents (JWS headers, JWT claims sets, JWKs and JWK sets): one
/// pass over the bytes, no `JSONDecoder`.
///
/// It accepts RFC 8259's grammar exactly: no comments, no trailing commas, no leading zeros or
/// `+` on numbers, no control characters in strings, no lone surrogates in `\u` escapes, no
/// byte that is not UTF-8; and it refuses what JOSE forbids on top: a member named twice in one
/// object, at any depth (RFC 7515 §5.2). A number too large for a `Double` is refused, never read
/// as infinity.
///
/// All operations are thread-safe: a reader lives for one call.
package struct JOSEJSONReader: ~Copyable {

    /// The deepest nesting of objects and arrays read: a JOSE document needs a handful; more is
    /// refused as hostile (recursion bounds the stack).
    package static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads `bytes` as one JSON value.
    ///
    /// - Throws: ``JOSEJSONError``.
    package static func read(_ bytes: UnsafeBufferPointer<UInt8>) throws(JOSEJSONError) -> JSONValue {
        var reader = JOSEJSONReader(bytes)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw .invalid }
        return value
    }

    /// Reads `bytes` as one JSON value.
    ///
    /// - Throws: ``JOSEJSONError``.
    package static func read(_ bytes: [UInt8]) throws(JOSEJSONError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JOSEJSONError) in try read(buffer) }
        }.get()
    }

    /// Reads `bytes` as one JSON object, the members `names` knows put in slots (their names
    /// compared as bytes), the others by name; a member named twice is refused.
    ///
    /// - Throws: ``JOSEJSONError``.
    package static func readObject(
        _ bytes: UnsafeBufferPointer<UInt8>,
        knowing names: JOSEKnownNames
    ) throws(JOSEJSONError) -> JOSEObject {
        var reader = JOSEJSONReader(bytes)
        reader.skipWhitespace()
        guard reader.index < bytes.count, bytes[reader.index] == UInt8(ascii: "{") else { throw .invalid }
        var object = JOSEObject(
            known: Array(repeating: nil, count: names.names.count),
            otherStrings: [:],
            otherValues: [:]
        )
        try reader.members(depth: 1) { (reader, name) throws(JOSEJSONError) in
            let slot: Int?
            switch name {
            case .slice(let range): slot = names.slot(of: UnsafeBufferPointer(rebasing: bytes[range]))
            case .unescaped(let text): slot = text.withUnsafeBufferPointer { names.slot(of: $0) }
            }
            let member = try reader.value(depth: 1)
            if let slot {
                guard object.known[slot] == nil else { throw .duplicateMember }
                object.known[slot] = member
            } else {
                let text =
                    switch name {
                    case .slice(let range): String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                    case .unescaped(let text): String(decoding: text, as: UTF8.self)
                    }
                // Each name is looked up in the other dictionary only when that one has members.
                if case .string(let value) = member {
                    guard object.otherStrings.updateValue(value, forKey: text) == nil,
                        object.otherValues.isEmpty || object.otherValues[text] == nil
                    else { throw .duplicateMember }
                } else {
                    guard object.otherValues.updateValue(member, forKey: text) == nil,
                        object.otherStrings.isEmpty || object.otherStrings[text] == nil
                    else { throw .duplicateMember }
                }
            }
        }
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw .invalid }
        return object
    }

    // MARK: - Values

    private mutating func value(depth: Int) throws(JOSEJSONError) -> JSONValue {
        guard index < bytes.count else { throw .invalid }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default:
            // A byte-order mark or any other non-ASCII byte outside a string is not JSON text;
            // name it as not UTF-8 when it is one, so the reason matches what the bytes are.
            if index == 0, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { throw .notUTF8 }
            throw .invalid
        }
    }

    private mutating func object(depth: Int) throws(JOSEJSONError) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        try self.members(depth: depth) { (reader, name) throws(JOSEJSONError) in
            let text =
                switch name {
                case .slice(let range):
                    String(decoding: UnsafeBufferPointer(rebasing: reader.bytes[range]), as: UTF8.self)
                case .unescaped(let text): String(decoding: text, as: UTF8.self)
                }
            let member = try reader.value(depth: depth)
            // Names compare as Swift strings: canonically equivalent spellings are one name, as
            // they are one key to every reader that builds a dictionary.
            guard members.updateValue(member, forKey: text) == nil else { throw .duplicateMember }
        }
        return members
    }

    /// Reads an object from its `{`, calling `member` with each name; `member` reads the value.
    private mutating func members(
        depth: Int,
        _ member: (inout JOSEJSONReader, StringBytes) throws(JOSEJSONError) -> Void
    ) throws(JOSEJSONError) {
        guard depth <= Self.maximumDepth else { throw .invalid }
        index += 1  // {
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw .invalid }
            let name = try stringBytes()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw .invalid }
            index += 1
            skipWhitespace()
            try member(&self, name)
            skipWhitespace()
            guard index < bytes.count else { throw .invalid }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                return
            default:
                throw .invalid
            }
        }
    }

    private mutating func array(depth: Int) throws(JOSEJSONError) -> [JSONValue] {
        guard depth <= Self.maximumDepth else { throw .invalid }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw .invalid }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                return elements
            default:
                throw .invalid
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(JOSEJSONError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw .invalid }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw .invalid
        }
        index += count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    // MARK: - Numbers

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, finite as a `Double`.
    private mutating func number() throws(JOSEJSONError) -> Double {
        let start = index
        var isNegative = false
        if bytes[index] == UInt8(ascii: "-") {
            isNegative = true
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw .invalid }
        var integer: UInt64 = 0
        var digits = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            guard index >= bytes.count || !isDigit(bytes[index]) else { throw .invalid }  // no leading zero
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                if digits < 19 { integer = integer &* 10 &+ UInt64(bytes[index] &- UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw .invalid }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw .invalid }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // Integers of up to 15 digits (every NumericDate) are exact as a Double: no text made.
        if isInteger, digits <= 15 {
            let magnitude = Double(integer)
            return isNegative ? -magnitude : magnitude
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw .invalid }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: - Strings

    /// A string's bytes: a slice of the input when it has no escape, else its bytes with escapes read.
    private enum StringBytes {
        case slice(Range<Int>)
        case unescaped([UInt8])
    }

    /// A string, from its opening quote: escapes read, UTF-8 checked.
    private mutating func string() throws(JOSEJSONError) -> String {
        switch try stringBytes() {
        case .slice(let range): return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        case .unescaped(let text): return String(decoding: text, as: UTF8.self)
        }
    }

    /// A string's bytes, from its opening quote: escapes read, UTF-8 checked.
    private mutating func stringBytes() throws(JOSEJSONError) -> StringBytes {
        index += 1  // "
        let start = index
        // The common case, no escape: the bytes are the string's. Printable ASCII is checked
        // inline; anything else takes the full check.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return .slice(start..<(index - 1))
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte >= 0x20, byte < 0x80 {
                index += 1
            } else {
                try checkCharacter(byte)
            }
        }
        guard index < bytes.count else { throw .invalid }
        var text = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return .unescaped(text)
            }
            if byte != UInt8(ascii: "\\") {
                // A run of characters up to the next quote or backslash, copied at once.
                let runStart = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                    let next = bytes[index]
                    if next >= 0x20, next < 0x80 {
                        index += 1
                    } else {
                        try checkCharacter(next)
                    }
                }
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                continue
            }
            index += 1
            guard index < bytes.count else { throw .invalid }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "t"): text.append(0x09)
            case UInt8(ascii: "u"): try appendEscapedScalar(to: &text)
            default: throw .invalid
            }
        }
        throw .invalid
    }

    /// Checks the character starting at `index` (a byte that is not a quote or a backslash): no
    /// control character, well-formed UTF-8 (no overlong form, no surrogate, nothing past
    /// U+10FFFF); moves past it.
    private mutating func checkCharacter(_ byte: UInt8) throws(JOSEJSONError) {
        if byte < 0x80 {
            guard byte >= 0x20 else { throw .invalid }
            index += 1
            return
        }
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch byte {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F  // no UTF-16 surrogate
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F  // nothing past U+10FFFF
        default: throw .notUTF8
        }
        guard bytes.count - index >= length else { throw .notUTF8 }
        let second = bytes[index + 1]
        guard second >= lower, second <= upper else { throw .notUTF8 }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 {
            throw .notUTF8
        }
        index += length
    }

    /// After `\u`: four hex digits, a surrogate pair as two escapes; the scalar's UTF-8 appended.
    private mutating func appendEscapedScalar(to text: inout [UInt8]) throws(JOSEJSONError) {
        let unit = try hexUnit()
        let scalarValue: UInt32
        switch unit {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw .invalid }
            index += 2
            let low = try hexUnit()
            guard (0xDC00...0xDFFF).contains(low) else { throw .invalid }
            scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
        case 0xDC00...0xDFFF:
            throw .invalid
        default:
            scalarValue = UInt32(unit)
        }
        guard let scalar = Unicode.Scalar(scalarValue), let encoded = UTF8.encode(scalar) else { throw .invalid }
        text.append(contentsOf: encoded)
    }

    private mutating func hexUnit() throws(JOSEJSONError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw .invalid }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalid
            }
            unit = unit << 4 | UInt16(digit)
            index += 1
        }
        return unit
    }
}
