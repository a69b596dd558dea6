import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The hand-written scanner (the launch's fast path) against `JSONDecoder` (the reference): for
/// every document the scanner accepts, both must give the same session; anything else the scanner
/// declines.
@Suite("SessionFormatScanner agrees with JSONDecoder")
struct SessionFormatScannerTests {

    @Test("20,000 ordinary sessions, written by the encoder: the scanner reads each, exactly as written")
    func ordinarySessions() {
        var random = SeededRandomNumberGenerator(seed: 11)
        for _ in 0..<20_000 {
            let session = Self.randomSession(using: &random, exotic: false)
            let data = SessionFormat.encode(session)
            #expect(SessionFormatScanner.session(in: data) == session, "declined or misread an ordinary session")
            Self.expectAgreement(data)
        }
    }

    @Test(
        "20,000 sessions with escapes, control characters and extreme numbers: the scanner reads them as JSONDecoder does, or declines"
    )
    func exoticSessions() {
        var random = SeededRandomNumberGenerator(seed: 13)
        for _ in 0..<20_000 {
            let session = Self.randomSession(using: &random, exotic: true)
            let data = SessionFormat.encode(session)
            Self.expectAgreement(data)
            if case .session(let decoded) = SessionFormat.decode(data), !session.accessToken.isEmpty,
                !session.user.identifier.isEmpty
            {
                #expect(decoded == session, "the store reads back what it wrote")
            }
        }
    }

    @Test(
        "200,000 mutated documents (bytes flipped, inserted, deleted): whatever the scanner accepts, JSONDecoder reads the same"
    )
    func mutatedDocuments() {
        var random = SeededRandomNumberGenerator(seed: 12)
        let specials: [UInt8] =
            Array(#"{}[]":,\ "#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xE2, 0xFF, 0x30, 0x2D, 0x2E, 0x65]
        for _ in 0..<2_000 {
            let base = [UInt8](
                SessionFormat.encode(Self.randomSession(using: &random, exotic: Bool.random(using: &random)))
            )
            for _ in 0..<100 {
                var bytes = base
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    let byte =
                        Bool.random(using: &random)
                        ? specials.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes[index] = byte
                    case 1: bytes.insert(byte, at: index)
                    default: if bytes.count > 1 { bytes.remove(at: index) }
                    }
                }
                Self.expectAgreement(Data(bytes))
            }
        }
    }

    @Test(
        "Its UTF-8 check (portable to iOS 14 and macOS 10.15) accepts exactly what Foundation's decoder accepts, and returns the same text"
    )
    func utf8CheckAgreesWithFoundation() {
        let tricky: [[UInt8]] = [
            [], [0x41], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBF, 0xBD],
            [0xFF], [0xC0, 0x80], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x41, 0xC3, 0x28], [0xEF, 0xBF, 0xBD, 0xFF],
        ]
        var generator = SeededRandomNumberGenerator(seed: 17)
        let random = (0..<20_000).map { _ in
            (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                [0x41, 0x80, 0xBF, 0xC2, 0xC3, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xFF].randomElement(using: &generator)!
            } as [UInt8]
        }
        for bytes in tricky + random {
            let expected = String(data: Data(bytes), encoding: .utf8)
            #expect(SessionFormatScanner.validUTF8(bytes) == expected, "bytes \(bytes)")
        }
    }

    /// If the scanner reads a session from `data`, JSONDecoder reads the same one.
    private static func expectAgreement(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let scanned = SessionFormatScanner.session(in: data) else { return }
        switch SessionFormat.decodeWithJSONDecoder(data) {
        case .session(let decoded):
            #expect(decoded == scanned, "the scanner and JSONDecoder disagree", sourceLocation: sourceLocation)
        case .corrupt(let reason):
            // The scanner does not validate; JSONDecoder's path does: an empty token or subject.
            #expect(
                scanned.accessToken.isEmpty || scanned.user.identifier.isEmpty,
                "the scanner accepted what JSONDecoder calls corrupt (\(reason))",
                sourceLocation: sourceLocation
            )
        case .unsupportedVersion(let version):
            Issue.record("the scanner accepted a version-\(version) document", sourceLocation: sourceLocation)
        }
    }

    private static func randomSession(using random: inout SeededRandomNumberGenerator, exotic: Bool) -> ManagedSession {
        let ordinary: [Character] = Array("abcXYZ019-_.~ @+é中😀")
        let pool: [Character] = exotic ? ordinary + Array("\"\\/\u{0}\u{1F}\u{7F}\u{2028}\t\n") : ordinary
        func text(_ maximum: Int) -> String {
            String((0..<Int.random(in: 0...maximum, using: &random)).map { _ in pool.randomElement(using: &random)! })
        }
        func maybe(_ maximum: Int) -> String? { Bool.random(using: &random) ? text(maximum) : nil }
        let numbers: [TimeInterval] =
            exotic
            ? [0, 1e-7, 123_456_789.123_456_7, 4e15, 1.7976931348623157e308, Double.leastNonzeroMagnitude]
            : [0, 1, 1_800_000_000, 1_800_003_600.5]
        var profile: [String: String] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            profile[text(6)] = text(10)
        }
        return ManagedSession(
            accessToken: text(40),
            refreshToken: maybe(40),
            idToken: maybe(60),
            tokenType: text(8),
            scope: maybe(20),
            expiresAt: numbers.randomElement(using: &random)!,
            issuedAt: numbers.randomElement(using: &random)!,
            user: ManagedUser(identifier: text(12), name: maybe(10), email: maybe(16), profile: profile),
            isBiometricAuthenticationEnabled: Bool.random(using: &random)
        )
    }
}
