import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// A token endpoint that rotates refresh tokens (a spent one is `invalid_grant`) and signs the
/// ID tokens of refreshes with `signer` (a sign-in may carry none); its key set URL's answer is
/// scripted.
private final class KeyRotatingServer: Sendable {
    struct State {
        var current = "rt-0"
        var serial = 0
        var signer: JWTSigner
        var jwks: Result<OAuth2HTTPResponse, RemoteAuthError>
        var jwksRequests = 0
        var refreshSubject = "user-42"
        var signInHasIDToken = true
    }
    let state: ConcurrencySafeContainer<State>
    let clock: ManualClock

    init(signer: JWTSigner, clock: ManualClock) {
        self.clock = clock
        state = ConcurrencySafeContainer(State(signer: signer, jwks: .success(Self.keySet([signer]))))
    }

    static func keySet(_ signers: [JWTSigner]) -> OAuth2HTTPResponse {
        Fixture.json(200, String(decoding: JWTSigner.keySetJSON(signers), as: UTF8.self))
    }

    var transport: StubTransport {
        StubTransport { [self] request in
            if request.url.path.hasSuffix("jwks.json") {
                return state.withLock { s in
                    s.jwksRequests += 1
                    return s.jwks
                }
            }
            guard request.url.path.hasPrefix("/o/token") else { return .success(OAuth2HTTPResponse(statusCode: 404)) }
            let form = request.form
            let isRefresh = form["grant_type"] == "refresh_token"
            let answer: (String, JWTSigner, String, Bool)? = state.withLock { s in
                if isRefresh {
                    guard form["refresh_token"] == s.current else { return nil }
                }
                s.serial += 1
                s.current = "rt-\(s.serial)"
                return (s.current, s.signer, s.refreshSubject, isRefresh || s.signInHasIDToken)
            }
            guard let (issued, signer, subject, hasIDToken) = answer else {
                return .success(Fixture.json(400, #"{"error":"invalid_grant"}"#))
            }
            let idToken = signer.sign(claims: Fixture.claims(now: clock.now, overrides: ["sub": subject]))
            let idField = hasIDToken ? #", "id_token": "\#(idToken)""# : ""
            return .success(
                Fixture.json(
                    200,
                    """
                    {"access_token": "at-\(issued)", "refresh_token": "\(issued)", "token_type": "Bearer", \
                    "expires_in": 3600\(idField)}
                    """
                )
            )
        }
    }
}

/// The OAuth client's ID-token checks across key rotations and key set outages: the issuer's own
/// tokens verify, what could not be verified is never stored, and a fetch's failure is never a
/// caller's cancellation.
@Suite struct IDTokenKeyRotationTests {
    let jwks = URL(string: "https://auth.example.com/o/jwks.json")!

    private func service(_ server: KeyRotatingServer, clock: ManualClock) -> OAuth2Service {
        var configuration = Fixture.configuration
        configuration.jwksURI = jwks
        configuration.endpoints.userInfo = nil
        configuration.endpoints.introspection = nil
        return OAuth2Service(configuration: configuration, transport: server.transport, clock: clock)
    }

    /// A manager (with its handle, which starts it) on the service for `server`.
    private func manager(
        _ server: KeyRotatingServer,
        clock: ManualClock
    ) -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
        let provider = ManagedSessionProvider(
            store: InMemorySessionStore(),
            remote: service(server, clock: clock),
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        return (provider, AuthSessionHandle(sessionProvider: provider))
    }

    /// A session whose server named no user at sign-in (identifier "") never takes the unverified
    /// `sub` of a refresh whose ID token could not be checked as its identity: it serves to refuse
    /// only, and is not stored.
    @Test func anUnverifiedSubjectIsNeverStored() async throws {
        let clock = ManualClock()
        let signer = JWTSigner(.es256(P256SigningKey()), keyID: "k1")
        let server = KeyRotatingServer(signer: signer, clock: clock)
        server.state.withLock {
            $0.signInHasIDToken = false
            $0.refreshSubject = "mallory"
        }
        let (provider, handle) = manager(server, clock: clock)
        try await provider.signIn(with: .password(username: "ada", password: "pw-1234567"))
        #expect(provider.session?.user.identifier == "", "no user named at sign-in")
        // The key set URL is down: the refresh's ID token cannot be checked.
        server.state.withLock { $0.jwks = .success(OAuth2HTTPResponse(statusCode: 503)) }
        let refreshed = try await provider.refresh()
        #expect(refreshed.idToken == nil)
        #expect(
            refreshed.user.identifier == "",
            "the unverified sub is not the session's identity: '\(refreshed.user.identifier)'"
        )
        // The next, verified, refresh names the real user: the session lives on.
        server.state.withLock {
            $0.jwks = .success(KeyRotatingServer.keySet([signer]))
            $0.refreshSubject = "user-42"
        }
        clock.advance(by: 10)
        _ = try? await provider.refresh()
        await provider.waitUntilIdle()
        #expect(handle.sessionStatus == .signedIn, "not signed out by an unverified subject")
    }

    /// The issuer rotated to a new key and signs ID tokens without `kid`; the verifier's set is a
    /// day old. The refresh's ID token is the issuer's own: the set is fetched again and it
    /// verifies, and the server's rotated refresh token is kept.
    @Test func aRefreshAfterAKeyRotationVerifiesWithADayOldSet() async throws {
        let clock = ManualClock()
        let old = JWTSigner(.es256(P256SigningKey()), keyID: nil)
        let rotated = JWTSigner(.es256(P256SigningKey()), keyID: nil)
        let server = KeyRotatingServer(signer: old, clock: clock)
        let oauth = service(server, clock: clock)
        let first = try await oauth.refresh("rt-0", scope: nil)
        #expect(first.refreshToken == "rt-1")
        server.state.withLock {
            $0.signer = rotated
            $0.jwks = .success(KeyRotatingServer.keySet([rotated]))
        }
        clock.advance(by: 86_400 + 1)
        let second = try await oauth.refresh("rt-1", scope: nil)
        #expect(second.refreshToken == "rt-2")
        #expect(second.idToken != nil, "verified with the key set fetched again")
        #expect(server.state.withLock { $0.jwksRequests } == 2)
    }

    /// A key set fetch that ended as `cancelled` (`URLError.cancelled`, from a TLS-pinning delegate
    /// cancelling the challenge, say) is a failed fetch: no sign-in that nobody cancelled reports
    /// `ManagedSessionError.cancelled`, which apps treat as the user backing out.
    @Test func aFetchTheTransportCancelledIsNoCallersCancellation() async throws {
        let clock = ManualClock()
        let signer = JWTSigner(.es256(P256SigningKey()), keyID: "k1")
        let server = KeyRotatingServer(signer: signer, clock: clock)
        server.state.withLock { $0.jwks = .failure(RemoteAuthError(.cancelled)) }
        let (provider, handle) = manager(server, clock: clock)
        _ = handle
        do {
            try await provider.signIn(with: .password(username: "ada", password: "pw-1234567"))
            Issue.record("signed in without the keys")
        } catch {
            #expect(error != .cancelled, "first sign-in, nobody cancelled it: \(error)")
        }
        server.state.withLock { $0.jwks = .success(KeyRotatingServer.keySet([signer])) }
        clock.advance(by: 1)
        do {
            try await provider.signIn(with: .password(username: "ada", password: "pw-1234567"))
        } catch {
            #expect(error != .cancelled, "second sign-in, nobody cancelled it: \(error)")
        }
        #expect(server.state.withLock { $0.jwksRequests } == 1)
    }
}

/// An introspection's answer shows no personal data.
@Suite struct TokenIntrospectionRedactionTests {
    @Test func noRenderingShowsTheUserName() {
        let introspection = TokenIntrospection(isActive: true, username: "ada@example.com", subject: "user-42")
        var dumped = ""
        dump(introspection, to: &dumped)
        for text in [String(describing: introspection), String(reflecting: introspection), dumped] {
            #expect(!text.contains("ada@example.com"), "\(text)")
        }
    }
}

private struct ThrowingVerifier: IDTokenSignatureVerifier {
    let error: RemoteAuthError
    func verifySignature(of token: JSONWebSignature) async throws(RemoteAuthError) { throw error }
}

/// A verifier of the app's own that cannot check a refresh's ID token never costs the refresh.
@Suite struct CustomVerifierRefreshTests {
    @Test(arguments: [
        RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400),
        RemoteAuthError(.unsupported("no keys")),
        RemoteAuthError(.cancelled),
        RemoteAuthError(.invalidIDToken(.issuerMismatch(expected: "a", actual: "b"))),
        RemoteAuthError(.invalidIDToken(.unsupportedAlgorithm("PS256"))),
    ])
    func aRefreshKeepsItsTokensWhateverACustomVerifierThrows(error: RemoteAuthError) async throws {
        let clock = ManualClock()
        let idToken = Fixture.idToken(Fixture.claims(now: clock.now))
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(idToken)""#)))
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: transport,
            clock: clock,
            signatureVerifier: ThrowingVerifier(error: error)
        )
        let tokens = try await service.refresh("rt", scope: nil)
        #expect(tokens.idToken == nil && tokens.user == nil && tokens.unverifiedSubject == "user-42")
        await #expect(throws: RemoteAuthError.self, "a sign-in is never kept unchecked") {
            _ = try await service.obtainTokens(with: .password(username: "a", password: "b"))
        }
    }
}
