import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// The OAuth client verifies every ID token it receives once it has keys: from the
/// configuration's key set, its `jwks_uri`, or discovery; a refresh keeps its tokens when the key
/// cannot be had right now.
@Suite struct IDTokenSignatureTests {

    private static let now = ManualClock.defaultStart
    private let signer = JWTSigner(.rs256(.testKeyA), keyID: "server-key-1")
    private let jwksURL = URL(string: "https://auth.example.com/o/.well-known/jwks.json")!

    private func idToken(by signer: JWTSigner, _ overrides: [String: Any] = [:]) -> String {
        signer.sign(claims: Fixture.claims(now: Self.now, overrides: overrides))
    }

    private func tokenAnswer(_ idToken: String) -> OAuth2HTTPResponse {
        Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(idToken)""#))
    }

    /// A server at `Fixture`'s endpoints whose token endpoint answers `idToken()` and whose key set
    /// is `published()`.
    private func server(
        idToken: @escaping @Sendable () -> String,
        published: @escaping @Sendable () -> [JWTSigner]
    ) -> StubTransport {
        StubTransport { request in
            switch request.url.path {
            case "/o/.well-known/jwks.json":
                return .success(Fixture.json(200, String(decoding: JWTSigner.keySetJSON(published()), as: UTF8.self)))
            case "/o/token":
                return .success(
                    Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(idToken())""#))
                )
            default:
                return .success(OAuth2HTTPResponse(statusCode: 404))
            }
        }
    }

    private func service(
        _ transport: StubTransport,
        clock: ManualClock = ManualClock(now: now),
        keySet: JSONWebKeySet? = nil,
        jwksURI: URL? = nil
    ) -> OAuth2Service {
        var configuration = Fixture.configuration
        configuration.keySet = keySet
        configuration.jwksURI = jwksURI
        return OAuth2Service(configuration: configuration, transport: transport, clock: clock)
    }

    private func signIn(_ service: OAuth2Service) async throws(RemoteAuthError) -> IssuedTokens {
        try await service.obtainTokens(with: .password(username: "ada", password: "pw-1234567"))
    }

    @Test func aConfiguredKeySetVerifiesEveryIDToken() async throws {
        let keySet = JSONWebKeySet(keys: [signer.publicKey])
        let good = service(StubTransport(tokenAnswer(idToken(by: signer))), keySet: keySet)
        #expect(good.signatureVerifier != nil)
        #expect(try await signIn(good).user?.identifier == "user-42")

        let forged = tamperedPayload(idToken(by: signer), replacing: "user-42", with: "user-43")
        do {
            _ = try await signIn(service(StubTransport(tokenAnswer(forged)), keySet: keySet))
            Issue.record("a token whose payload changed was accepted")
        } catch {
            #expect(error.reason == .invalidIDToken(.invalidSignature))
            #expect(error.statusCode == 200)
            #expect(error.kind == .misconfiguration)
        }

        let otherKey = JWTSigner(.rs256(.testKeyB), keyID: signer.keyID)
        await #expect(throws: RemoteAuthError(.invalidIDToken(.invalidSignature), statusCode: 200)) {
            try await signIn(service(StubTransport(tokenAnswer(idToken(by: otherKey))), keySet: keySet))
        }
    }

    @Test func withoutKeysOnlyTheClaimsAreChecked() async throws {
        let plain = service(StubTransport(tokenAnswer(Fixture.idToken(Fixture.claims(now: Self.now)))))
        #expect(plain.signatureVerifier == nil)
        #expect(try await signIn(plain).idToken != nil)
    }

    @Test func theJWKSURIIsFetchedOnceAndCached() async throws {
        let signer = signer
        let transport = server(idToken: { [self] in idToken(by: signer) }, published: { [signer] })
        let client = service(transport, jwksURI: jwksURL)
        for _ in 0..<3 {
            #expect(try await signIn(client).user?.identifier == "user-42")
        }
        let keyRequests = transport.requests.filter { $0.url == jwksURL }
        #expect(keyRequests.count == 1)
        #expect(keyRequests.first?.method == "GET")
        #expect(keyRequests.first?.header("Accept")?.contains("application/jwk-set+json") == true)
    }

    @Test func discoveryNamesTheKeySet() async throws {
        let signer = signer
        let current = ConcurrencySafeContainer(signer)
        let keys = server(idToken: { [self] in idToken(by: current.withLock { $0 }) }, published: { [signer] })
        let discovery = Fixture.json(
            200,
            #"""
            {"issuer": "https://auth.example.com/o", "token_endpoint": "https://auth.example.com/o/token/",
             "jwks_uri": "https://auth.example.com/o/.well-known/jwks.json"}
            """#
        )
        let transport = StubTransport { request in
            request.url.path == "/o/.well-known/openid-configuration" ? .success(discovery) : keys.answer(request)
        }
        let clock = ManualClock(now: Self.now)
        let client = try await OAuth2Service.discover(
            issuer: URL(string: Fixture.issuer)!,
            client: OAuth2Client(id: Fixture.clientID),
            transport: transport,
            clock: clock
        )
        #expect(client.configuration.jwksURI == jwksURL)
        #expect(try await signIn(client).idToken != nil)
        clock.advance(by: 61)  // the set may be fetched again for the next token
        current.withLock { $0 = JWTSigner(.rs256(.testKeyB), keyID: signer.keyID) }
        await #expect(throws: RemoteAuthError(.invalidIDToken(.invalidSignature), statusCode: 200)) {
            try await signIn(client)
        }
    }

    @Test func aSignInFailsTransientlyWhenTheKeysCannotBeFetched() async {
        let token = idToken(by: signer)
        let transport = StubTransport { request in
            request.url.path == "/o/token"
                ? .success(Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(token)""#)))
                : .failure(RemoteAuthError(.network(code: -1009)))
        }
        do {
            _ = try await signIn(service(transport, jwksURI: jwksURL))
            Issue.record("signed in without checking the signature")
        } catch {
            #expect(error.reason == .network(code: -1009))
            #expect(error.kind == .transient)
        }
    }

    @Test func aRefreshKeepsItsTokensWhenTheNewKeyCannotBeHadYet() async throws {
        let clock = ManualClock(now: Self.now)
        let signer = signer
        let rotated = JWTSigner(.rs256(.testKeyB), keyID: "server-key-2")
        let current = ConcurrencySafeContainer(signer)
        let published = ConcurrencySafeContainer([signer])
        let transport = server(
            idToken: { [self] in idToken(by: current.withLock { $0 }) },
            published: { published.withLock { $0 } }
        )
        let client = service(transport, clock: clock, jwksURI: jwksURL)
        #expect(try await signIn(client).user != nil)

        // The server rotates to a key it publishes after the client's fetch, 10 s ago.
        published.withLock { $0 = [rotated, signer] }
        current.withLock { $0 = rotated }
        clock.advance(by: 10)
        let refreshed = try await client.refresh(Fixture.refreshToken, scope: nil)
        #expect(refreshed.accessToken == Fixture.accessToken, "the rotated tokens are kept")
        #expect(refreshed.refreshToken == Fixture.refreshToken)
        #expect(refreshed.idToken == nil, "the unchecked ID token is not used")
        #expect(refreshed.user == nil, "no claim of it is used")
        #expect(refreshed.unverifiedSubject == "user-42", "only its subject, to refuse another user's tokens")

        // A minute after the fetch, the key set is fetched again and the new key verifies.
        clock.advance(by: 50)
        let later = try await client.refresh(Fixture.refreshToken, scope: nil)
        #expect(later.idToken != nil && later.user?.identifier == "user-42")
        #expect(transport.requests.filter { $0.url == jwksURL }.count == 2)

        // A signature that the keys fetched for it do not verify is refused on a refresh too (a
        // minute after the last fetch, so that the set may be fetched again for it).
        clock.advance(by: 61)
        current.withLock { $0 = JWTSigner(.rs256(.testKeyA), keyID: "server-key-2") }
        await #expect(throws: RemoteAuthError(.invalidIDToken(.invalidSignature), statusCode: 200)) {
            try await client.refresh(Fixture.refreshToken, scope: nil)
        }
    }

    @Test func aGivenVerifierReplacesTheConfigurationsKeys() async throws {
        struct Refusing: IDTokenSignatureVerifier {
            func verifySignature(of token: JSONWebSignature) async throws(RemoteAuthError) {
                throw RemoteAuthError(.invalidIDToken(.invalidSignature))
            }
        }
        var configuration = Fixture.configuration
        configuration.keySet = JSONWebKeySet(keys: [signer.publicKey])
        let client = OAuth2Service(
            configuration: configuration,
            transport: StubTransport(tokenAnswer(idToken(by: signer))),
            clock: ManualClock(now: Self.now),
            signatureVerifier: Refusing()
        )
        await #expect(throws: RemoteAuthError(.invalidIDToken(.invalidSignature), statusCode: 200)) {
            try await signIn(client)
        }
    }
}

/// `token` with its payload's `old` replaced by `new` (the JSON stays valid, the signature
/// stays the old one's).
func tamperedPayload(_ token: String, replacing old: String, with new: String) -> String {
    let parts = token.split(separator: ".").map(String.init)
    let payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
    return parts[0] + "." + Base64URL.encode(Data(payload.replacingOccurrences(of: old, with: new).utf8)) + "."
        + parts[2]
}
