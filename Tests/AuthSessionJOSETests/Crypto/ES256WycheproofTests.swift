import AuthSessionJOSE
import Testing

/// ECDSA over P-256 with SHA-256, signatures as `r ‖ s` (JWS `ES256`), against Wycheproof's
/// vectors. The file has no "acceptable" vector; one would be refused, as for RS256.
@Suite(.disabled(if: isThreadSanitized, "pure computation, no thread to watch: plain swift test runs it"))
struct ES256WycheproofTests {

    @Test("P-256: 173 valid verified, 89 invalid refused, 0 acceptable; every group's key loads")
    func p256() async throws {
        let name = "ecdsa_secp256r1_sha256_p1363_test"
        let file = try CryptoFixtures.wycheproof(name, key: CryptoFixtures.ECKey.self)
        #expect(file.algorithm == "ECDSA")
        var tally = CryptoFixtures.Tally()
        var groups = 0
        for group in file.testGroups {
            #expect(group.publicKey.curve == "secp256r1")
            // Every group's key must load: a refused key would skip its vectors silently.
            let key = try P256PublicKey(
                x: try coordinate(group.publicKey.wx),
                y: try coordinate(group.publicKey.wy)
            )
            groups += 1
            for test in group.tests {
                let signature = try #require(CryptoFixtures.bytes(hexadecimal: test.sig))
                let message = try #require(CryptoFixtures.bytes(hexadecimal: test.msg))
                tally.count(test, verified: key.isValidSignature(signature, for: message), file: name)
                // Milliseconds a vector in a debug build: leave the runner's threads to the
                // tests whose subject is timing.
                await Task.yield()
            }
        }
        #expect(groups == 112)
        #expect(tally.total == file.numberOfTests, "\(tally)")
        #expect(tally == CryptoFixtures.Tally(validVerified: 173, invalidRefused: 89, acceptableRefused: 0))
    }

    /// Wycheproof writes a coordinate as a positive ASN.1 integer: a leading 00 when the top bit
    /// is set, fewer bytes when it starts with zeros. A JWK coordinate is exactly 32 bytes.
    private func coordinate(_ hexadecimal: String) throws -> [UInt8] {
        let bytes = try #require(CryptoFixtures.bytes(hexadecimal: hexadecimal))
        let significant = Array(bytes.drop { $0 == 0 })
        try #require(significant.count <= 32, "coordinate longer than 32 bytes: \(hexadecimal)")
        return [UInt8](repeating: 0, count: 32 - significant.count) + significant
    }
}
