import Foundation
import Testing

/// Hexadecimal and Wycheproof reading for the crypto tests.
///
/// All operations are thread-safe.
enum CryptoFixtures {

    /// The bytes that `hexadecimal` spells (two digits a byte, either case), or nil.
    static func bytes(hexadecimal: String) -> [UInt8]? {
        let digits = Array(hexadecimal.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(of: digits[index]), let low = value(of: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// Lowercase hexadecimal.
    static func hexadecimal(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// One Wycheproof file (`Fixtures/wycheproof/<name>.json`); `Key` is its groups' public key.
    struct WycheproofFile<Key: Decodable & Sendable>: Decodable, Sendable {
        let algorithm: String
        let numberOfTests: Int
        let testGroups: [Group]

        struct Group: Decodable, Sendable {
            let publicKey: Key
            let tests: [Case]
        }
    }

    /// One test case: hex message and signature, and the verdict.
    struct Case: Decodable, Sendable {
        let tcId: Int
        let comment: String
        let msg: String
        let sig: String
        let result: String
        let flags: [String]
    }

    /// An RSA group's key: hex modulus and exponent.
    struct RSAKey: Decodable, Sendable {
        let modulus: String
        let publicExponent: String
    }

    /// An EC group's key: hex coordinates (a leading 00 keeps a number positive).
    struct ECKey: Decodable, Sendable {
        let curve: String
        let wx: String
        let wy: String
    }

    static func wycheproof<Key>(_ name: String, key: Key.Type) throws -> WycheproofFile<Key> {
        let url = try #require(
            Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures/wycheproof")
        )
        return try JSONDecoder().decode(WycheproofFile<Key>.self, from: Data(contentsOf: url))
    }

    /// What a run over a file saw; any other outcome is recorded as an issue, not counted.
    struct Tally: Equatable, CustomStringConvertible {
        var validVerified = 0
        var invalidRefused = 0
        var acceptableRefused = 0

        var total: Int { validVerified + invalidRefused + acceptableRefused }

        var description: String {
            "\(validVerified) valid verified, \(invalidRefused) invalid refused, \(acceptableRefused) acceptable refused"
        }

        /// Counts `test`'s outcome, or records an issue when `verified` contradicts its result.
        ///
        /// "acceptable" cases must be refused: this package accepts exactly one encoding.
        mutating func count(_ test: Case, verified: Bool, file: String) {
            switch (test.result, verified) {
            case ("valid", true): validVerified += 1
            case ("invalid", false): invalidRefused += 1
            case ("acceptable", false): acceptableRefused += 1
            default:
                Issue.record(
                    "\(file) tcId \(test.tcId) (\(test.result), \(test.flags), \(test.comment)): verified = \(verified)"
                )
            }
        }
    }
}
