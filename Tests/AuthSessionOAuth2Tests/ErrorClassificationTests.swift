import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// Every error an endpoint can answer lands in the kind the caller must act on.
@Suite struct ErrorClassificationTests {

    @Test(arguments: [
        ("invalid_grant", 400, RemoteAuthError.Kind.terminal),
        ("invalid_token", 401, .terminal),
        ("expired_token", 400, .terminal),
        ("access_denied", 400, .terminal),
        ("invalid_client", 401, .misconfiguration),
        ("unauthorized_client", 400, .misconfiguration),
        ("invalid_scope", 400, .misconfiguration),
        ("unsupported_grant_type", 400, .misconfiguration),
        ("invalid_request", 400, .misconfiguration),
        ("temporarily_unavailable", 503, .transient),
        ("server_error", 500, .transient),
        ("some_new_code", 400, .misconfiguration),
        ("some_new_code", 503, .transient),
    ])
    func serverErrorObjects(code: String, status: Int, kind: RemoteAuthError.Kind) async throws {
        let transport = StubTransport(Fixture.json(status, #"{"error": "\#(code)"}"#))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.reason == .server(code: code))
        #expect(error?.statusCode == status)
        #expect(error?.kind == kind)
    }

    @Test(arguments: [
        (500, RemoteAuthError.Kind.transient), (502, .transient), (503, .transient), (504, .transient),
        (429, .transient), (408, .transient), (404, .misconfiguration), (401, .misconfiguration),
        (403, .misconfiguration), (302, .misconfiguration),
    ])
    func statusWithoutErrorObject(status: Int, kind: RemoteAuthError.Kind) async throws {
        let transport = StubTransport(
            OAuth2HTTPResponse(
                statusCode: status,
                headers: ["Content-Type": "text/html"],
                body: Data("<html>oops</html>".utf8)
            )
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.reason == .httpStatus(status))
        #expect(error?.kind == kind)
    }

    @Test func retryAfterIsKeptInSecondsAndAsADate() async throws {
        let transport = StubTransport(
            OAuth2HTTPResponse(statusCode: 503, headers: ["Retry-After": "120", "Content-Type": "text/html"])
        )
        let seconds = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(seconds?.retryAfter == .seconds(120))
        #expect(seconds?.description.contains("retry after 120 s") == true)

        transport.answer { _ in
            .success(
                Fixture.json(
                    429,
                    #"{"error": "slow_down_please"}"#,
                    headers: ["Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"]
                )
            )
        }
        let date = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(date?.retryAfter == .date(Date(timeIntervalSince1970: 1_792_567_680)))
        #expect(date?.kind == .transient)
    }

    @Test(arguments: [
        ("0", RetryAfter.seconds(0)), (" 30 ", .seconds(30)),
        ("Sun, 06 Nov 1994 08:49:37 GMT", .date(Date(timeIntervalSince1970: 784_111_777))),
        ("Sunday, 06-Nov-94 08:49:37 GMT", .date(Date(timeIntervalSince1970: 784_111_777))),
        ("Sun Nov  6 08:49:37 1994", .date(Date(timeIntervalSince1970: 784_111_777))),
    ])
    func retryAfterForms(value: String, expected: RetryAfter) {
        #expect(RetryAfter(headerValue: value) == expected)
    }

    @Test(arguments: ["", "-5", "1.5", "soon", "Sun, 99 Nov 1994 08:49:37 GMT"])
    func retryAfterNonsense(value: String) {
        #expect(RetryAfter(headerValue: value) == nil)
    }

    @Test func bearerChallengeWithoutBody() async throws {
        let transport = StubTransport(
            OAuth2HTTPResponse(
                statusCode: 401,
                headers: ["WWW-Authenticate": #"Bearer realm="api", error="invalid_token""#]
            )
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).userInfo(accessToken: Fixture.accessToken)
        }
        #expect(error?.reason == .accessTokenRejected, "an expired access token is refused the same way")
        #expect(error?.kind == .transient, "refresh, do not sign out")
    }

    @Test(
        "a 401 from userinfo refuses the token with no challenge or a Bearer one naming no other error; another scheme's challenge (a proxy's) does not",
        arguments: [
            (nil as String?, true), ("Bearer realm=\"api\"", true), ("Bearer error=\"invalid_token\"", true),
            ("Basic realm=\"corporate-proxy\"", false), ("Negotiate", false),
            ("Bearer error=\"insufficient_scope\"", false), ("Basic realm=\"x\", Bearer error=\"invalid_token\"", true),
        ]
    )
    func userInfoChallenges(challenge: String?, refusesToken: Bool) async throws {
        var headers: [String: String] = [:]
        if let challenge { headers["WWW-Authenticate"] = challenge }
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 401, headers: headers))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).userInfo(accessToken: Fixture.accessToken)
        }
        #expect((error?.reason == .accessTokenRejected) == refusesToken, "\(String(describing: challenge))")
    }

    @Test("a credential check answered 401 with a proxy's Basic challenge is no revocation")
    func credentialStateWithABasicChallenge() async throws {
        var configuration = Fixture.configuration
        configuration.endpoints.introspection = nil
        let clock = ManualClock()
        let transport = StubTransport(
            OAuth2HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": "Basic realm=\"corporate-proxy\""])
        )
        let service = OAuth2Service(configuration: configuration, transport: transport, clock: clock)
        let session = ManagedSession(
            accessToken: Fixture.accessToken,
            expiresAt: clock.now.timeIntervalSince1970 + 3_600,
            issuedAt: clock.now.timeIntervalSince1970,
            user: ManagedUser(identifier: "user-42")
        )
        let state = try? await service.credentialState(for: session)
        #expect(state != CredentialState.revoked, "\(String(describing: state))")
    }

    @Test(
        "userinfo's bare 401 (no challenge, as Glewlwyd answers) refuses the token: refresh, do not sign out; a bare 403 does not"
    )
    func bareUnauthorizedFromUserInfo() async throws {
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 401))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).userInfo(accessToken: Fixture.accessToken)
        }
        #expect(error?.reason == .accessTokenRejected)
        #expect(error?.kind == .transient)
        transport.answer { _ in .success(OAuth2HTTPResponse(statusCode: 403)) }
        let forbidden = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).userInfo(accessToken: Fixture.accessToken)
        }
        #expect(forbidden?.reason == .httpStatus(403))
    }

    @Test(arguments: [
        #"Bearer realm="api", error="invalid_token""#, #"Bearer error=invalid_token"#,
        #"Bearer Error="invalid_token", error_description="expired""#,
        #"Bearer realm="x error="fake"", error="invalid_token""#,
    ])
    func bearerChallengeForms(challenge: String) async throws {
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": challenge]))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).userInfo(accessToken: Fixture.accessToken)
        }
        #expect(error?.reason == .accessTokenRejected, "\(challenge)")
    }

    @Test func errorObjectWithAWrongContentTypeIsStillRead() async throws {
        let transport = StubTransport(
            OAuth2HTTPResponse(
                statusCode: 400,
                headers: ["Content-Type": "text/plain"],
                body: Data(#"{"error": "invalid_grant"}"#.utf8)
            )
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.serverCode == "invalid_grant")
    }

    @Test func retryAfterExtremesNeitherCrashNorTruncate() {
        #expect(RetryAfter(headerValue: "0000000000005") == .seconds(5))
        #expect(RetryAfter(headerValue: String(repeating: "9", count: 40))!.delay(from: Date()) > 1e30)
        for value in [RetryAfter.seconds(.infinity), .seconds(.nan), .seconds(1e300), .seconds(-1e300)] {
            let error = RemoteAuthError(.httpStatus(503), statusCode: 503, retryAfter: value)
            #expect(!error.description.isEmpty)
        }
        #expect(RetryAfter.seconds(.nan).delay(from: Date()) == 0)
    }

    @Test func transportFailuresAreTransient() async throws {
        for reason in [RemoteAuthError.Reason.network(code: -1004), .timedOut, .network(code: -1005)] {
            let transport = StubTransport { _ in .failure(RemoteAuthError(reason)) }
            let error = await #expect(throws: RemoteAuthError.self) {
                try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
            }
            #expect(error?.kind == .transient)
            #expect(error?.isRetryable == true)
        }
        #expect(RemoteAuthError(.cancelled).isRetryable == false)
    }

    @Test func plainHTTPToTheNetworkIsRefusedBeforeSending() async throws {
        var configuration = Fixture.configuration
        configuration.endpoints.token = URL(string: "http://auth.example.com/o/token/")!
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON()))
        let service = OAuth2Service(configuration: configuration, transport: transport)
        let error = await #expect(throws: RemoteAuthError.self) {
            try await service.refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.kind == .misconfiguration)
        #expect(transport.requests.isEmpty)

        configuration.endpoints.token = URL(string: "http://127.0.0.1:8000/o/token/")!
        _ = try await OAuth2Service(configuration: configuration, transport: transport).refresh(
            Fixture.refreshToken,
            scope: nil
        )
        #expect(transport.requests.count == 1)
    }
}

/// A refresh refused with a bare 400, as Glewlwyd refuses a spent, reused or revoked refresh token.
@Suite("A refresh refused without an error object")
struct BareRefreshRefusalTests {

    @Test(
        "a bare 400 to a refresh is invalid_grant, terminal, status 400; with an error object, the server's code stands"
    )
    func bareFourHundredToARefreshIsInvalidGrant() async throws {
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 400))
        let bare = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(bare?.serverCode == "invalid_grant")
        #expect(bare?.kind == .terminal)
        #expect(bare?.statusCode == 400)

        transport.answer { _ in .success(Fixture.json(400, #"{"error":"invalid_request"}"#)) }
        let named = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(named?.serverCode == "invalid_request")
        #expect(named?.kind == .misconfiguration)
    }

    @Test(
        "a 400 to a refresh with a page that is no error object (a proxy's HTML) is no refused grant: the session is not ended for it"
    )
    func proxyPageIsNoRefusedGrant() async throws {
        let transport = StubTransport(
            OAuth2HTTPResponse(
                statusCode: 400,
                headers: ["Content-Type": "text/html"],
                body: Data("<html><h1>400 Request Header Or Cookie Too Large</h1></html>".utf8)
            )
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.reason == .httpStatus(400))
        #expect(error?.kind != .terminal)
    }

    @Test("other bare answers keep their status: a 403 to a refresh, a 400 to a sign-in")
    func otherBareAnswersKeepTheirStatus() async throws {
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 403))
        let forbidden = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(forbidden?.reason == .httpStatus(403))

        transport.answer { _ in .success(OAuth2HTTPResponse(statusCode: 400)) }
        let signIn = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).obtainTokens(with: .password(username: "u", password: "p"))
        }
        #expect(signIn?.reason == .httpStatus(400))
        #expect(signIn?.kind == .misconfiguration)
    }
}

/// The safety net itself: it must fire over a wait that ignores cancellation, or a lost wake-up
/// hangs the run instead of failing it.
@Suite("The tests' safety net")
struct SafetyNetTests {

    @Test("a net fires over a wait that ignores cancellation (a continuation nobody resumes yet)")
    func firesOverADeafWait() async throws {
        let waiter = ConcurrencySafeContainer<CheckedContinuation<Void, Never>?>(nil)
        let expired: Bool
        do {
            try await withSafetyNet(0.2) {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    waiter.withLock { $0 = continuation }
                }
            }
            expired = false
        } catch is SafetyNetExpired {
            expired = true
        }
        #expect(expired)
        // The body's wait ends now, after the net gave up on it.
        try await waitUntil { waiter.withLock { $0 != nil } }
        waiter.withLock { $0.take() }?.resume()
    }
}
