/// Finds a secret's UTF-8 bytes in a text's, where each byte of the secret may also appear in an
/// encoding that URLs, forms and JSON give it, and replaces every occurrence.
///
/// A secret byte `b` matches, at a position of the text:
/// - `b` itself;
/// - `%XX` or `%25XX` (percent-encoded once or twice), with hex digits of either case;
/// - `+`, when `b` is a space (form encoding);
/// - `\/`, when `b` is `/`, and `\u00XX` (JSON escapes).
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
        for byte in secret {
            guard let next = matchByte(byte, in: text, at: position) else { return nil }
            position = next
        }
        return position
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
