import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// A token endpoint that rotates refresh tokens (a spent one is `invalid_grant`), signs every
/// ID token with `signer`, and a key set URL whose answer the test scripts.
private final class RotatingServer: Sendable {
    struct State {
        var current = "rt-0"
        var serial = 0
        var spent: Set<String> = []
        var jwks: OAuth2HTTPResponse
        var refreshes = 0
    }
    let state: ConcurrencySafeContainer<State>
    let signer: JWTSigner
    let clock: ManualClock

    init(signer: JWTSigner, clock: ManualClock) {
        self.signer = signer
        self.clock = clock
        state = ConcurrencySafeContainer(
            State(jwks: Fixture.json(200, String(decoding: JWTSigner.keySetJSON([signer]), as: UTF8.self)))
        )
    }

    func setJWKS(_ response: OAuth2HTTPResponse) { state.withLock { $0.jwks = response } }
    func publishKeys() { setJWKS(Fixture.json(200, String(decoding: JWTSigner.keySetJSON([signer]), as: UTF8.self))) }

    var transport: StubTransport {
        StubTransport { [self] request in
            if request.url.path.hasSuffix("jwks.json") { return .success(state.withLock { $0.jwks }) }
            guard request.url.path.hasPrefix("/o/token") else { return .success(OAuth2HTTPResponse(statusCode: 404)) }
            let form = request.form
            let issued: String? = state.withLock { s in
                if form["grant_type"] == "refresh_token" {
                    s.refreshes += 1
                    guard form["refresh_token"] == s.current else { return nil }
                    s.spent.insert(s.current)
                }
                s.serial += 1
                s.current = "rt-\(s.serial)"
                return s.current
            }
            guard let issued else { return .success(Fixture.json(400, #"{"error":"invalid_grant"}"#)) }
            let idToken = signer.sign(claims: Fixture.claims(now: clock.now))
            return .success(
                Fixture.json(
                    200,
                    """
                    {"access_token": "at-\(issued)", "refresh_token": "\(issued)", "token_type": "Bearer", \
                    "expires_in": 3600, "id_token": "\(idToken)"}
                    """
                )
            )
        }
    }
}

/// A refresh whose ID token cannot be checked now keeps the server's rotated tokens, whatever the
/// key set's URL answers (only a signature verdict refuses them), and still refuses another
/// user's tokens.
@Suite struct RefreshIDTokenCheckTests {
    let clock = ManualClock()
    let jwks = URL(string: "https://auth.example.com/o/jwks.json")!

    private func service(_ server: RotatingServer) -> OAuth2Service {
        var configuration = Fixture.configuration
        configuration.jwksURI = jwks
        return OAuth2Service(configuration: configuration, transport: server.transport, clock: clock)
    }

    private func launch(
        _ server: RotatingServer,
        store: InMemorySessionStore
    ) -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
        let provider = ManagedSessionProvider(
            store: store,
            remote: service(server),
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        return (provider, handle)
    }

    /// At a relaunch the verifier holds no keys; the first refresh must fetch them. The key set's
    /// URL answers with an error (a WAF, a CDN hiccup, an error object): the server has already
    /// rotated, so the new tokens are kept, and the session lives on when the URL recovers.
    @Test(arguments: [
        ("403", Fixture.json(403, "<html>forbidden</html>", headers: ["Content-Type": "text/html"])),
        ("404", OAuth2HTTPResponse(statusCode: 404)),
        ("400 invalid_grant", Fixture.json(400, #"{"error": "invalid_grant"}"#)),
        ("503", OAuth2HTTPResponse(statusCode: 503)),
        ("200, not a key set", Fixture.json(200, #"{"keys": "none"}"#)),
        (
            "401 Bearer invalid_token",
            OAuth2HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        ),
    ])
    func aRefreshKeepsItsTokensWhateverTheKeySetURLAnswers(label: String, answer: OAuth2HTTPResponse) async throws {
        let signer = JWTSigner(.es256(P256SigningKey()), keyID: "k1")
        let server = RotatingServer(signer: signer, clock: clock)
        let store = InMemorySessionStore()
        do {
            let (provider, handle) = launch(server, store: store)
            try await provider.signIn(with: .password(username: "ada", password: "pw-1234567"))
            _ = handle
        }
        // Relaunch: a new manager and a new service (the key cache is in memory only).
        let (provider, handle) = launch(server, store: store)
        await provider.waitUntilIdle()
        #expect(provider.session?.refreshToken == "rt-1")
        server.setJWKS(answer)
        let refreshed = try await provider.refresh()
        #expect(refreshed.refreshToken == "rt-2", "\(label): the rotated refresh token is kept")
        #expect(
            refreshed.idToken != nil && refreshed.user.identifier == "user-42",
            "the previous ID token and user stay"
        )
        server.publishKeys()  // the key set's URL recovers
        #expect(try await provider.refresh().refreshToken == "rt-3")
        await provider.waitUntilIdle()
        #expect(handle.sessionStatus == .signedIn, "\(label)")
    }
}

/// The different-user check of a refresh (OpenID Connect Core §12.2) holds whether or not the
/// refresh's ID token can be verified now.
@Suite struct RefreshSubjectCheckTests {
    /// A refresh answers with another user's tokens: signed by a known key, or by a key the
    /// verifier cannot fetch yet (inside the refetch minute). Either way the session ends, and the
    /// other user's tokens are never used.
    @Test(arguments: [true, false])
    func anotherUsersRefreshAnswerEndsTheSession(keyKnown: Bool) async throws {
        let clock = ManualClock()
        let k1 = JWTSigner(.es256(P256SigningKey()), keyID: "k1")
        let k2 = JWTSigner(.es256(P256SigningKey()), keyID: "k2")
        let refreshSigner = keyKnown ? k1 : k2
        let published = [k1]
        let transport = StubTransport { request in
            if request.url.path.hasSuffix("jwks.json") {
                return .success(Fixture.json(200, String(decoding: JWTSigner.keySetJSON(published), as: UTF8.self)))
            }
            let isRefresh = request.form["grant_type"] == "refresh_token"
            let signer = isRefresh ? refreshSigner : k1
            let sub = isRefresh ? "user-99" : "user-42"
            let idToken = signer.sign(claims: Fixture.claims(now: clock.now, overrides: ["sub": sub]))
            return .success(
                Fixture.json(
                    200,
                    """
                    {"access_token": "at-for-\(sub)", "refresh_token": "rt-for-\(sub)", "token_type": "Bearer", \
                    "expires_in": 3600, "id_token": "\(idToken)"}
                    """
                )
            )
        }
        var configuration = Fixture.configuration
        configuration.jwksURI = URL(string: "https://auth.example.com/o/jwks.json")!
        let service = OAuth2Service(configuration: configuration, transport: transport, clock: clock)
        let provider = ManagedSessionProvider(
            store: InMemorySessionStore(),
            remote: service,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let handle = AuthSessionHandle(sessionProvider: provider)
        try await provider.signIn(with: .password(username: "ada", password: "pw-1234567"))
        clock.advance(by: 10)
        do {
            _ = try await provider.refresh()
            Issue.record("another user's refresh answer was taken")
        } catch {
            #expect(
                error
                    == .remote(
                        RemoteAuthError(.invalidIDToken(.subjectMismatch(expected: "user-42", actual: "user-99")))
                    )
            )
        }
        await provider.waitUntilIdle()
        #expect(provider.session == nil, "keyKnown \(keyKnown)")
        #expect(handle.sessionStatus == .signedOut)
    }
}
