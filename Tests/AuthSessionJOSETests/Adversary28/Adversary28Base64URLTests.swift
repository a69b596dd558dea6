import AuthSessionJOSE
import Foundation
import Testing

/// Promise 3: base64url in its one canonical form only; `encode` round-trips everything.
@Suite struct Adversary28Base64URLTests {

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The oracle: Foundation's base64 over the translated, padded text, and canonical iff it
    /// encodes back to the same text.
    private func oracle(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count % 4 != 1, bytes.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        var text = String(decoding: bytes, as: UTF8.self)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text) else { return nil }
        return Base64URL.encode(data) == String(decoding: bytes, as: UTF8.self) ? [UInt8](data) : nil
    }

    private func decodeBytes(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { Base64URL.decodeBytes($0) }
    }

    private func decode(_ bytes: [UInt8]) -> [UInt8]? {
        // `decode` takes text: only bytes that are UTF-8 can be spelled as text.
        guard let text = String(validating: bytes, as: UTF8.self) else { return decodeBytes(bytes) }
        return Base64URL.decode(text).map { [UInt8]($0) }
    }

    @Test func encodeMatchesFoundationAndRoundTrips() {
        var rng = Adv28RNG(seed: 0x28_0400)
        var tried = 0
        for length in 0...300 {
            for _ in 0..<(length < 20 ? 60 : 8) {
                let data = (0..<length).map { _ in UInt8(rng.int(0...255)) }
                tried += 1
                let encoded = Base64URL.encode(data)
                let foundation = Data(data).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
                #expect(encoded == foundation, "\(data)")
                #expect(Base64URL.decode(encoded).map { [UInt8]($0) } == data, "decode(encode) \(data)")
                #expect(decodeBytes(Array(encoded.utf8)) == data)
                #expect(
                    Base64URL.decode(Substring("x" + encoded + "y").dropFirst().dropLast()).map { [UInt8]($0) } == data
                )
            }
        }
        // Every single byte and every pair, exhaustively.
        for a in 0...255 {
            tried += 1
            #expect(Base64URL.decode(Base64URL.encode([UInt8(a)])).map { [UInt8]($0) } == [UInt8(a)])
            for b in stride(from: 0, through: 255, by: 1) {
                let pair = [UInt8(a), UInt8(b)]
                if Base64URL.decode(Base64URL.encode(pair)).map({ [UInt8]($0) }) != pair { Issue.record("\(pair)") }
            }
        }
        print("Adversary28 count: \(tried) random round trips + 65536 pairs")
        #expect(tried > 3000)
    }

    @Test func everyShortStringDecodesExactlyWhenCanonical() {
        var tried = 0
        var failures = 0
        // All strings of length 0...3 over the alphabet plus some outsiders, exhaustively.
        let symbols = Self.alphabet + Array("+/= .\n\0".utf8) + [0x80, 0xC3, 0xFF]
        var strings: [[UInt8]] = [[]]
        for a in symbols {
            strings.append([a])
            for b in symbols {
                strings.append([a, b])
                for c in Self.alphabet + Array("+/=".utf8) { strings.append([a, b, c]) }
            }
        }
        for bytes in strings {
            tried += 1
            let expected = oracle(bytes)
            let viaBytes = decodeBytes(bytes)
            let viaText = decode(bytes)
            if viaBytes != expected || viaText != expected {
                failures += 1
                if failures <= 10 {
                    Issue.record(
                        "\(adv28Hex(bytes)): oracle \(String(describing: expected)), decodeBytes \(String(describing: viaBytes)), decode \(String(describing: viaText))"
                    )
                }
            }
        }
        print("Adversary28 count: \(tried) short base64url strings")
        #expect(failures == 0, "\(failures) of \(tried)")
    }

    @Test func everyByteInEveryPositionOfLongerTexts() {
        var rng = Adv28RNG(seed: 0x28_0401)
        var tried = 0
        var failures = 0
        for _ in 0..<150 {
            let length = rng.int(1...40)
            let valid = Array(Base64URL.encode((0..<length).map { _ in UInt8(rng.int(0...255)) }).utf8)
            let position = rng.int(0...(valid.count - 1))
            for byte in 0...255 {
                for insert in [false, true] {
                    var bytes = valid
                    if insert { bytes.insert(UInt8(byte), at: position) } else { bytes[position] = UInt8(byte) }
                    tried += 1
                    let expected = oracle(bytes)
                    let got = decodeBytes(bytes)
                    if got != expected {
                        failures += 1
                        if failures <= 10 {
                            Issue.record(
                                "\(adv28Hex(bytes)): oracle \(String(describing: expected)), decodeBytes \(String(describing: got))"
                            )
                        }
                    }
                }
            }
        }
        // Padded, or with '+' '/' anywhere: never.
        for length in 1...30 {
            let data = (0..<length).map { _ in UInt8(rng.int(0...255)) }
            let standard = Data(data).base64EncodedString()
            tried += 1
            if standard.contains("=") { #expect(Base64URL.decode(standard) == nil, "padded \(standard)") }
            if standard.contains("+") || standard.contains("/") {
                #expect(Base64URL.decode(standard) == nil, "\(standard)")
            }
        }
        #expect(failures == 0, "\(failures) of \(tried)")
    }
}
