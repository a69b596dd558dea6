/// Finds a secret's UTF-8 bytes in a text's, where each byte of the secret may also appear in an
/// encoding that URLs, forms and JSON give it, and replaces every occurrence.
///
/// A secret byte `b` matches, at a position of the text:
/// - `b` itself;
/// - `%XX` or `%25XX` (percent-encoded once or twice), with hex digits of either case;
/// - `+`, when `b` is a space (form encoding);
/// - `\/`, when `b` is `/`, and `\u00XX` (JSON escapes).
///
/// And a run of the secret's bytes matches a JSON escape of the character they spell: `\"`,
/// `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\uXXXX` with hex digits of either case, a
/// surrogate pair for a character beyond the Basic Multilingual Plane (as Python's `json.dumps`
/// writes every non-ASCII character by default, and Foundation's encoders write `"`, `\` and `/`).
///
/// Matching is on bytes, not characters: a combining mark after the secret does not hide it.
enum EncodedMatch {

    /// Replaces every occurrence of `secret` in `text` with `replacement`.
    ///
    /// - Returns: Whether anything was replaced.
    static func replace(_ secret: [UInt8], in text: inout [UInt8], with replacement: [UInt8]) -> Bool {
        guard !secret.isEmpty else { return false }
        var output: [UInt8] = []
        var replaced = false
        var index = 0
        while index < text.count {
            if let end = match(secret, in: text, at: index) {
                if !replaced {
                    output.reserveCapacity(text.count)
                    output.append(contentsOf: text[0..<index])
                    replaced = true
                }
                output.append(contentsOf: replacement)
                index = end
            } else {
                if replaced {
                    output.append(text[index])
                }
                index += 1
            }
        }
        if replaced {
            text = output
        }
        return replaced
    }

    /// The end of an occurrence of `secret` starting at `start`, or `nil`.
    private static func match(_ secret: [UInt8], in text: [UInt8], at start: Int) -> Int? {
        var position = start
        var index = 0
        while index < secret.count {
            if let (next, bytes) = jsonEscape(in: text, at: position), bytes.count > 0,
                secret[index...].starts(with: bytes)
            {
                position = next
                index += bytes.count
                continue
            }
            guard let next = matchByte(secret[index], in: text, at: position) else { return nil }
            position = next
            index += 1
        }
        return position
    }

    /// The JSON escape at `position` (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, or
    /// `\uXXXX`, a surrogate pair taken together): where it ends, and the UTF-8 bytes of the
    /// character it stands for; `nil` when there is none.
    private static func jsonEscape(in text: [UInt8], at position: Int) -> (end: Int, bytes: [UInt8])? {
        guard position + 1 < text.count, text[position] == UInt8(ascii: "\\") else { return nil }
        let simple: UInt8? =
            switch text[position + 1] {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case UInt8(ascii: "/"): UInt8(ascii: "/")
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "t"): 0x09
            default: nil
            }
        if let simple { return (position + 2, [simple]) }
        guard text[position + 1] == UInt8(ascii: "u"), let unit = codeUnit(text, position + 2) else { return nil }
        var end = position + 6
        var scalar = UInt32(unit)
        if (0xD800...0xDBFF).contains(unit) {
            // A high surrogate: only with the low one after it is it a character.
            guard end + 1 < text.count, text[end] == UInt8(ascii: "\\"), text[end + 1] == UInt8(ascii: "u"),
                let low = codeUnit(text, end + 2), (0xDC00...0xDFFF).contains(low)
            else { return nil }
            scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            end += 6
        }
        guard let character = Unicode.Scalar(scalar) else { return nil }
        return (end, Array(String(Character(character)).utf8))
    }

    /// The UTF-16 code unit four hex digits at `position` spell, or `nil`.
    private static func codeUnit(_ text: [UInt8], _ position: Int) -> UInt16? {
        guard let high = hex(text, position), let low = hex(text, position + 2) else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    /// Where `byte`, in one of its encodings, ends if it starts at `position`; `nil` otherwise.
    private static func matchByte(_ byte: UInt8, in text: [UInt8], at position: Int) -> Int? {
        guard position < text.count else { return nil }
        let first = text[position]
        if first == byte { return position + 1 }
        if first == UInt8(ascii: "+") && byte == UInt8(ascii: " ") { return position + 1 }
        if first == UInt8(ascii: "%") {
            if let value = hex(text, position + 1), value == byte { return position + 3 }
            if position + 2 < text.count, text[position + 1] == UInt8(ascii: "2"),
                text[position + 2] == UInt8(ascii: "5"),
                let value = hex(text, position + 3), value == byte
            {
                return position + 5
            }
            return nil
        }
        if first == UInt8(ascii: "\\"), position + 1 < text.count {
            let second = text[position + 1]
            if second == UInt8(ascii: "/") && byte == UInt8(ascii: "/") { return position + 2 }
            if second == UInt8(ascii: "u"), position + 5 < text.count, text[position + 2] == UInt8(ascii: "0"),
                text[position + 3] == UInt8(ascii: "0"), let value = hex(text, position + 4), value == byte
            {
                return position + 6
            }
        }
        return nil
    }

    /// The byte two hex digits at `position` spell, or `nil`.
    private static func hex(_ text: [UInt8], _ position: Int) -> UInt8? {
        guard position + 1 < text.count, let high = digit(text[position]), let low = digit(text[position + 1]) else {
            return nil
        }
        return high << 4 | low
    }

    private static func digit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
