import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

/// A token endpoint may echo anything into an ID token's header (a password, say): an error about
/// `alg` or `kid` names the parameter, never its value, in any rendering, the log line included.
@Suite struct HeaderValuesNotEchoedTests {

    private static let secret = "hunter2"
    private let rs256 = JWTSigner(.rs256(.testKeyA), keyID: "rsa-a")

    /// Every way an app or the package renders `error`, joined.
    private func renderings(of error: RemoteAuthError) -> [String] {
        let managed = ManagedSessionError.remote(error)
        var texts = [
            String(describing: error), String(reflecting: error), error.localizedDescription,
            String(describing: managed), String(reflecting: managed), managed.localizedDescription,
            ManagedSessionObservation.signInFinished(grantType: "password", error: managed, duration: 0.1).logLine,
        ]
        if let refusal = refusal(error) {
            texts += [String(describing: refusal), String(reflecting: refusal), refusal.localizedDescription]
            var dumped = ""
            dump(refusal, to: &dumped)
            texts.append(dumped)
        }
        var dumped = ""
        dump(error, to: &dumped)
        dump(managed, to: &dumped)
        texts.append(dumped)
        return texts
    }

    @Test("an alg that echoes a secret: refused, and named without its value")
    func unsupportedAlgorithmIsNamedNotEchoed() async throws {
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [rs256.publicKey]))
        let token = rs256.sign(claims: someClaims(), extraHeader: ["alg": Self.secret])

        let error = try #require(await verificationError(verifier, token))

        guard case .unsupportedAlgorithm? = refusal(error) else {
            Issue.record("expected unsupportedAlgorithm, got \(error)")
            return
        }
        #expect(String(describing: error).contains("alg"))
        for text in renderings(of: error) {
            #expect(!text.contains(Self.secret), "\(text)")
        }
    }

    @Test("a kid that echoes a secret: no key for it, and named without its value")
    func unknownKeyIDIsNamedNotEchoed() async throws {
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [rs256.publicKey]))
        let token = rs256.sign(claims: someClaims(), extraHeader: ["kid": Self.secret])

        let error = try #require(await verificationError(verifier, token))

        guard case .unknownSigningKey? = refusal(error) else {
            Issue.record("expected unknownSigningKey, got \(error)")
            return
        }
        #expect(String(describing: error).contains("kid"))
        for text in renderings(of: error) {
            #expect(!text.contains(Self.secret), "\(text)")
        }
    }

    @Test("a kid whose key verifies another algorithm than a secret alg: neither value shown")
    func keyAlgorithmMismatchShowsNoHeaderValue() {
        let error = RemoteAuthError(
            .invalidIDToken(
                .keyAlgorithmMismatch(keyID: Self.secret, keyAlgorithm: "RS256", tokenAlgorithm: Self.secret)
            )
        )
        for text in renderings(of: error) {
            #expect(!text.contains(Self.secret), "\(text)")
        }
    }

    @Test("the parsed token's description, reflection and dump show neither alg nor kid as sent")
    func parsedTokenShowsNoHeaderValue() throws {
        let token = try JSONWebSignature(
            compact: rs256.sign(claims: someClaims(), extraHeader: ["alg": Self.secret, "kid": Self.secret])
        )
        var dumped = ""
        dump(token, to: &dumped)
        for text in [String(describing: token), String(reflecting: token), dumped] {
            #expect(!text.contains(Self.secret), "\(text)")
        }
        let registered = try JSONWebSignature(compact: rs256.sign(claims: someClaims()))
        #expect(String(describing: registered).contains("RS256"))
    }
}
