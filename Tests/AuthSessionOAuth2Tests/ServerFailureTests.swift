import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// A 5xx says the server failed, whatever error object or challenge it carries: transient at
/// every endpoint, so that no session ends for it.
@Suite struct ServerFailureTests {

    private static func failing(_ status: Int, code: String) -> StubTransport {
        StubTransport(Fixture.json(status, #"{"error": "\#(code)", "error_description": "upstream failed"}"#))
    }

    @Test(arguments: [500, 502, 503, 504], ["invalid_grant", "invalid_token", "invalid_client", "invalid_scope"])
    func aRefreshAnsweredWithA5xxIsTransient(status: Int, code: String) async throws {
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(Self.failing(status, code: code)).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.kind == .transient)
        #expect(error?.reason == .httpStatus(status))
        #expect(error?.statusCode == status)
        #expect(error?.serverDescription == "upstream failed", "the developer's detail stays")
    }

    @Test func aTransientCodeInA5xxIsKept() async throws {
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(Self.failing(503, code: "temporarily_unavailable"))
                .refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.reason == .server(code: "temporarily_unavailable"))
        #expect(error?.kind == .transient)
    }

    @Test func aBearerChallengeInA5xxIsTransient() async throws {
        let transport = StubTransport(
            OAuth2HTTPResponse(statusCode: 502, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).userInfo(accessToken: Fixture.accessToken)
        }
        #expect(error?.kind == .transient)
        #expect(error?.reason == .httpStatus(502), "not a refused access token")
    }

    @Test func aRevocationAnsweredWithA5xxIsNotTakenAsDone() async throws {
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(Self.failing(503, code: "invalid_token")).revoke(
                Fixture.refreshToken,
                kind: .refreshToken
            )
        }
        #expect(error?.kind == .transient, "the server failed: the token may be live")
    }

    /// The session manager over the client: a refresh answered 503 `invalid_grant` keeps the
    /// session, and the next refresh, answered, goes on with it.
    @Test func aRefreshAnswered503InvalidGrantDoesNotEndTheSession() async throws {
        let clock = ManualClock()
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON(expiresIn: "3600")))
        let store = MockSessionStore()
        let provider = ManagedSessionProvider(
            store: store,
            remote: Fixture.service(transport, clock: clock),
            retryPolicy: .never,
            clock: clock,
            configuration: .init(checksCredentialState: false)
        )
        let signedIn = try await provider.signIn(with: .clientCredentials)
        transport.answer { _ in .success(Fixture.json(503, #"{"error": "invalid_grant"}"#)) }
        let error = await #expect(throws: ManagedSessionError.self) { try await provider.refresh() }
        #expect(error?.endsSession == false)
        #expect(provider.session == signedIn, "the session stands")
        #expect(try store.load() == signedIn)
        await provider.waitUntilIdle()
        #expect(provider.session == signedIn)
    }
}
