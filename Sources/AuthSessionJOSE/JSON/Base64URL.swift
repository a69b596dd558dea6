import Foundation

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), as JWTs and PKCE use it.
package enum Base64URL {

    /// Encodes `data` without padding.
    package static func encode(_ data: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        var iterator = data.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            text.append(alphabet[Int(group >> 18 & 0x3F)])
            text.append(alphabet[Int(group >> 12 & 0x3F)])
            if second != nil { text.append(alphabet[Int(group >> 6 & 0x3F)]) }
            if third != nil { text.append(alphabet[Int(group & 0x3F)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Decodes base64url text in its one canonical form: the URL-safe alphabet only (no `+`, `/`
    /// or padding) and unused trailing bits zero; `nil` for anything else. So one value has one
    /// text: a token's parts cannot be re-spelled into another token string that still verifies
    /// (an ECDSA signature keeps its two valid forms, `s` and `n - s`, as ECDSA has).
    package static func decode(_ text: some StringProtocol) -> Data? {
        var text = String(text)
        return text.withUTF8 { decodeBytes($0) }.map { Data($0) }
    }

    /// ``decode(_:)`` over the text's UTF-8, into bytes: one pass, no intermediate text.
    package static func decodeBytes(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let remainder = text.count % 4
        guard remainder != 1 else { return nil }
        let count = text.count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var isValid = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            values.withUnsafeBufferPointer { table in
                var input = 0
                var written = 0
                // Whole groups: four characters, three bytes. An invalid character's value has
                // its high bits set, which the OR of the four keeps.
                while input + 4 <= text.count {
                    let a = table[Int(text[input])]
                    let b = table[Int(text[input + 1])]
                    let c = table[Int(text[input + 2])]
                    let d = table[Int(text[input + 3])]
                    guard (a | b | c | d) & 0xC0 == 0 else {
                        isValid = false
                        return
                    }
                    output[written] = a << 2 | b >> 4
                    output[written + 1] = b << 4 | c >> 2
                    output[written + 2] = c << 6 | d
                    input += 4
                    written += 3
                }
                switch remainder {
                case 2:
                    let a = table[Int(text[input])]
                    let b = table[Int(text[input + 1])]
                    // Canonical: the unused low bits are zero.
                    guard (a | b) & 0xC0 == 0, b & 0x0F == 0 else {
                        isValid = false
                        return
                    }
                    output[written] = a << 2 | b >> 4
                    written += 1
                case 3:
                    let a = table[Int(text[input])]
                    let b = table[Int(text[input + 1])]
                    let c = table[Int(text[input + 2])]
                    guard (a | b | c) & 0xC0 == 0, c & 0x03 == 0 else {
                        isValid = false
                        return
                    }
                    output[written] = a << 2 | b >> 4
                    output[written + 1] = b << 4 | c >> 2
                    written += 2
                default:
                    break
                }
                initialized = written
            }
        }
        return isValid ? bytes : nil
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let invalid: UInt8 = 0xFF

    /// Each byte's 6-bit value, or ``invalid``.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()
}
