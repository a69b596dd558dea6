import AuthSessionJOSE
import Testing

/// RSASSA-PKCS1-v1_5 with SHA-256 (JWS `RS256`) against Wycheproof's vectors.
///
/// "acceptable" vectors are refused by decision: ``RSAPublicKey`` compares the decrypted block
/// with the one DER encoding of `DigestInfo` (with its `NULL` parameters) instead of parsing it.
/// The only such vector in each file is flagged `MissingNull`: `DigestInfo` without the `NULL`,
/// which RFC 8017 §9.2 note 2 lets a verifier accept, and which no JWT issuer produces.
@Suite(.disabled(if: isThreadSanitized, "pure computation, no thread to watch: plain swift test runs it"))
struct RS256WycheproofTests {

    @Test("2048-bit keys: 9 valid verified, 249 invalid refused, 1 acceptable (MissingNull) refused")
    func rsa2048() async throws {
        let tally = try await run("rsa_signature_2048_sha256_test", modulusBits: 2048)
        #expect(tally == CryptoFixtures.Tally(validVerified: 9, invalidRefused: 249, acceptableRefused: 1))
    }

    @Test("3072-bit keys: 8 valid verified, 250 invalid refused, 1 acceptable (MissingNull) refused")
    func rsa3072() async throws {
        let tally = try await run("rsa_signature_3072_sha256_test", modulusBits: 3072)
        #expect(tally == CryptoFixtures.Tally(validVerified: 8, invalidRefused: 250, acceptableRefused: 1))
    }

    @Test("the acceptable vectors are exactly the MissingNull ones, and they are refused")
    func missingNullIsRefused() throws {
        for name in ["rsa_signature_2048_sha256_test", "rsa_signature_3072_sha256_test"] {
            let file = try CryptoFixtures.wycheproof(name, key: CryptoFixtures.RSAKey.self)
            var seen = 0
            for group in file.testGroups {
                let key = try publicKey(group.publicKey)
                for test in group.tests where test.result == "acceptable" {
                    #expect(test.flags == ["MissingNull"], "\(name) tcId \(test.tcId)")
                    let signature = try #require(CryptoFixtures.bytes(hexadecimal: test.sig))
                    let message = try #require(CryptoFixtures.bytes(hexadecimal: test.msg))
                    #expect(!key.isValidPKCS1v15SHA256Signature(signature, for: message))
                    seen += 1
                }
            }
            #expect(seen == 1, "\(name)")
        }
    }

    /// Runs every vector of `name`, yielding between vectors: a verification in a debug build is
    /// milliseconds of computation, and this suite must not hold the test runner's few threads
    /// from the tests whose subject is timing.
    private func run(_ name: String, modulusBits: Int) async throws -> CryptoFixtures.Tally {
        let file = try CryptoFixtures.wycheproof(name, key: CryptoFixtures.RSAKey.self)
        #expect(file.algorithm == "RSASSA-PKCS1-v1_5")
        var tally = CryptoFixtures.Tally()
        for group in file.testGroups {
            // Every group's key must load: a refused key would skip its vectors silently.
            let key = try publicKey(group.publicKey)
            #expect(key.modulusBitCount == modulusBits)
            for test in group.tests {
                let signature = try #require(CryptoFixtures.bytes(hexadecimal: test.sig))
                let message = try #require(CryptoFixtures.bytes(hexadecimal: test.msg))
                tally.count(test, verified: key.isValidPKCS1v15SHA256Signature(signature, for: message), file: name)
                await Task.yield()
            }
        }
        #expect(tally.total == file.numberOfTests, "\(tally)")
        return tally
    }

    private func publicKey(_ fields: CryptoFixtures.RSAKey) throws -> RSAPublicKey {
        try RSAPublicKey(
            modulus: try #require(CryptoFixtures.bytes(hexadecimal: fields.modulus)),
            exponent: try #require(CryptoFixtures.bytes(hexadecimal: fields.publicExponent))
        )
    }
}
