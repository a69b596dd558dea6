import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request authorizer: the token on every request, one refresh on a rejection, one retry, no
/// replay of a body that cannot be replayed.
@Suite struct AuthorizedHTTPClientTests {

    @Test("a 401 refreshes once, and the retry carries the new token")
    func rejectionRefreshesOnceAndRetries() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)

        let (data, response) = try await harness.client.data(for: AuthorizerHarness.request)

        #expect(response.statusCode == 200)
        #expect(!data.isEmpty)
        #expect(harness.server.refreshCount == 1)
        let new = try #require(harness.provider.session?.accessToken)
        #expect(new != old)
        #expect(harness.api.receivedTokens == [old, new])
    }

    @Test("a valid token: one request, no refresh")
    func validTokenSendsOnce() async throws {
        let harness = AuthorizerHarness()
        let token = try await harness.signIn()
        let (_, response) = try await harness.client.data(for: AuthorizerHarness.request)
        #expect(response.statusCode == 200)
        #expect(harness.api.receivedTokens == [token])
        #expect(harness.server.refreshCount == 0)
    }

    @Test("a second 401 is returned to the caller, after one refresh only")
    func secondRejectionIsReturned() async throws {
        let harness = AuthorizerHarness()
        try await harness.signIn()
        let challenge = #"Bearer error="invalid_token""#
        harness.api.script([(401, challenge), (401, challenge)])

        let (_, response) = try await harness.client.data(for: AuthorizerHarness.request)

        #expect(response.statusCode == 401)
        #expect(harness.server.refreshCount == 1)
        #expect(harness.api.received.count == 2)
    }

    @Test("a token that changed since the request was signed: retried with the new one, no refresh")
    func changedTokenRetriesWithoutRefresh() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        harness.api.holdRejections(true)
        let client = harness.client
        let request = Task { try await client.data(for: AuthorizerHarness.request) }
        try await waitUntil { harness.api.heldCount == 1 }
        // Someone else refreshes while the rejection is on its way back.
        let new = try await harness.provider.refresh().accessToken
        #expect(harness.server.refreshCount == 1)
        harness.api.releaseAllHeld()

        let (_, response) = try await withSafetyNet { try await request.value }

        #expect(response.statusCode == 200)
        #expect(harness.server.refreshCount == 1, "the rejection of a replaced token refreshes nothing")
        #expect(harness.api.receivedTokens == [old, new], "the retry carries the token the other refresh brought")
    }

    @Test("a body stream is never sent twice: its 401 is returned, with no refresh")
    func streamBodyIsNotReplayed() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        var request = AuthorizerHarness.request
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("one-shot".utf8))

        let (_, response) = try await harness.client.data(for: request)

        #expect(response.statusCode == 401)
        #expect(harness.api.received.count == 1)
        #expect(harness.api.received.first?.hasBodyStream == true)
        #expect(harness.server.refreshCount == 0)
    }

    @Test("a POST with a data body is sent again, with the same body")
    func dataBodyIsReplayed() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        var request = AuthorizerHarness.request
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"name":"Alice"}"#.utf8)

        let (_, response) = try await harness.client.data(for: request)

        #expect(response.statusCode == 200)
        #expect(harness.api.received.map(\.method) == ["POST", "POST"])
        #expect(harness.api.received.map(\.body) == [request.httpBody, request.httpBody])
        #expect(harness.server.refreshCount == 1)
    }

    @Test("a 401 that names another Bearer error is returned, with no refresh")
    func otherBearerErrorIsReturned() async throws {
        let harness = AuthorizerHarness()
        try await harness.signIn()
        harness.api.script([(401, #"Bearer realm="api", error="invalid_request""#)])

        let (_, response) = try await harness.client.data(for: AuthorizerHarness.request)

        #expect(response.statusCode == 401)
        #expect(harness.server.refreshCount == 0)
        #expect(harness.api.received.count == 1)
    }

    @Test("a refresh that ends the session (invalid_grant) is the error, and the session is over")
    func refreshEndingTheSessionThrows() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        harness.server.enqueueRefreshFaults([.invalidGrant])

        let error = await #expect(throws: AuthorizedRequestError.self) {
            try await harness.client.data(for: AuthorizerHarness.request)
        }

        guard case .session(let cause) = error else {
            Issue.record("expected a session error, got \(String(describing: error))")
            return
        }
        #expect(cause.endsSession)
        #expect(harness.provider.session == nil)
        #expect(harness.api.received.count == 1, "nothing is retried without a token")
        #expect(!"\(cause)".contains(old))
    }

    @Test("nobody signed in: a session error, nothing sent")
    func notSignedIn() async throws {
        let harness = AuthorizerHarness()
        let error = await #expect(throws: AuthorizedRequestError.self) {
            try await withSafetyNet { try await harness.client.data(for: AuthorizerHarness.request) }
        }
        guard case .session(.notSignedIn) = error else {
            Issue.record("expected notSignedIn, got \(String(describing: error))")
            return
        }
        #expect(harness.api.received.isEmpty)
    }

    @Test("a cancelled caller gets cancelled; the refresh it joined goes on")
    func cancelledCaller() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        harness.server.holdsRefreshes = true
        let client = harness.client
        let request = Task { try await client.data(for: AuthorizerHarness.request) }
        try await harness.server.waitForHeldRefreshes(1, timeout: 300)

        request.cancel()
        let result = try await withSafetyNet { await request.result }

        guard case .failure(let error as AuthorizedRequestError) = result, case .cancelled = error else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        harness.server.releaseHeldRefreshes()
        await harness.provider.waitUntilIdle()
        #expect(harness.server.refreshCount == 1)
        #expect(harness.provider.session?.accessToken != old, "the shared refresh committed")
        #expect(harness.api.received.count == 1, "the cancelled caller did not retry")
    }

    @Test("a caller cancelled while its request is out: cancelled, no refresh")
    func cancelledWhileSending() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        harness.api.holdRejections(true)
        let client = harness.client
        let request = Task { try await client.data(for: AuthorizerHarness.request) }
        try await waitUntil { harness.api.heldCount == 1 }

        request.cancel()
        let result = try await withSafetyNet { await request.result }

        guard case .failure(let error as AuthorizedRequestError) = result, case .cancelled = error else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        #expect(harness.server.refreshCount == 0)
    }

    @Test("plain http to a host other than loopback: refused before a token is read")
    func insecureRequestIsRefused() async throws {
        let harness = AuthorizerHarness()
        try await harness.signIn()
        let error = await #expect(throws: AuthorizedRequestError.self) {
            try await harness.client.data(for: URLRequest(url: URL(string: "http://api.example.com/v1")!))
        }
        guard case .insecureRequest = error else {
            Issue.record("expected insecureRequest, got \(String(describing: error))")
            return
        }
        #expect(harness.api.received.isEmpty)
        #expect(AuthorizedHTTPClient.isSafeDestination(URL(string: "http://127.0.0.1:8000/o/userinfo/")))
        #expect(AuthorizedHTTPClient.isSafeDestination(URL(string: "http://localhost/x")))
        #expect(AuthorizedHTTPClient.isSafeDestination(URL(string: "http://[::1]:80/x")))
        #expect(AuthorizedHTTPClient.isSafeDestination(URL(string: "HTTPS://api.example.com")))
        #expect(!AuthorizedHTTPClient.isSafeDestination(URL(string: "http://127.0.0.1.evil.example/")))
        #expect(!AuthorizedHTTPClient.isSafeDestination(URL(string: "ftp://127.0.0.1/")))
    }

    @Test("the scheme follows the session's token type; DPoP is refused")
    func tokenTypeScheme() async throws {
        #expect(AuthorizedHTTPClient.authorizationScheme(for: "bearer") == "Bearer")
        #expect(AuthorizedHTTPClient.authorizationScheme(for: "BEARER") == "Bearer")
        #expect(AuthorizedHTTPClient.authorizationScheme(for: "Token") == "Token")
        #expect(AuthorizedHTTPClient.authorizationScheme(for: "DPoP") == nil)
        #expect(AuthorizedHTTPClient.authorizationScheme(for: "Bearer x") == nil)
        #expect(AuthorizedHTTPClient.authorizationScheme(for: "") == nil)

        let clock = ManualClock()
        let now = clock.now.timeIntervalSince1970
        let stored = ManagedSession(
            accessToken: "at-dpop-bound",
            refreshToken: "rt-dpop-bound",
            tokenType: "DPoP",
            expiresAt: now + 86_400,
            issuedAt: now,
            user: AuthorizerHarness.user
        )
        let harness = AuthorizerHarness(stored: stored)
        let error = await #expect(throws: AuthorizedRequestError.self) {
            try await withSafetyNet { try await harness.client.data(for: AuthorizerHarness.request) }
        }
        guard case .unsupportedTokenType(let type) = error else {
            Issue.record("expected unsupportedTokenType, got \(String(describing: error))")
            return
        }
        #expect(type == "DPoP")
        #expect(harness.api.received.isEmpty)
    }

    @Test("a session without a refresh token: its 401 is the answer, and the session stands")
    func rejectionWithoutARefreshTokenIsReturned() async throws {
        let now = ManualClock().now.timeIntervalSince1970
        let stored = ManagedSession(
            accessToken: "at-without-refresh",
            refreshToken: nil,
            expiresAt: now + 3600,
            issuedAt: now,
            user: AuthorizerHarness.user
        )
        // A token the in-process server never issued: its credential verdict is not asked for.
        let harness = AuthorizerHarness(stored: stored, checksCredentialState: false)
        harness.api.reject("at-without-refresh")

        let (_, response) = try await withSafetyNet { try await harness.client.data(for: AuthorizerHarness.request) }

        #expect(response.statusCode == 401)
        #expect(harness.api.received.count == 1, "nothing to retry with")
        #expect(harness.server.refreshCount == 0)
        #expect(harness.provider.session?.accessToken == "at-without-refresh")
        #expect(harness.handle.sessionStatus.isSignedIn)
    }

    @Test(
        "which 401s reject the token (RFC 6750 §3.1)",
        arguments: [
            (401, nil, true),
            (401, #"Bearer error="invalid_token""#, true),
            (401, #"Bearer realm="api", error="invalid_token", error_description="expired, sorry""#, true),
            (401, #"Bearer realm="api""#, true),
            (401, #"Basic realm="legacy""#, true),
            (401, #"Bearer error="invalid_request""#, false),
            (401, #"Bearer realm="a, b", error=insufficient_scope"#, false),
            (401, #"Newauth realm="apps", type=1, title="Login to \"apps\"", Bearer error="invalid_token""#, true),
            (401, #"Basic realm="x", error="invalid_request", Bearer"#, true),
            (403, #"Bearer error="insufficient_scope""#, false),
            (200, nil, false),
        ] as [(Int, String?, Bool)]
    )
    func rejectionRules(status: Int, challenge: String?, rejects: Bool) {
        let response = HTTPURLResponse(
            url: ScriptedResourceServer.url,
            statusCode: status,
            httpVersion: "HTTP/1.1",
            headerFields: challenge.map { ["WWW-Authenticate": $0] } ?? [:]
        )!
        #expect(AuthorizedHTTPClient.rejectsToken(response) == rejects)
    }

    @Test("no description carries a token")
    func descriptionsCarryNoToken() {
        let errors: [AuthorizedRequestError] = [
            .session(.notSignedIn), .network(URLError(.notConnectedToInternet)), .insecureRequest,
            .unsupportedTokenType("DPoP"), .cancelled,
        ]
        for error in errors {
            #expect(!error.description.isEmpty)
            #expect(error.errorDescription?.isEmpty == false)
        }
    }
}

/// Many requests rejected with one token: exactly one refresh reaches the server, whenever the
/// rejections arrive (before the refresh, while it is out, after it committed).
@Suite struct AuthorizedHTTPClientSingleRefreshTests {

    static let iterations = 200
    static let concurrentRequests = 100

    @Test("100 concurrent requests rejected with the same token: one refresh, 200 rounds")
    func concurrentRejectionsRefreshOnce() async throws {
        var generator: SeededRandomNumberGenerator? = SeededRandomNumberGenerator(seed: 17)
        var rounds = 0
        for round in 0..<Self.iterations {
            let refreshes = try await Self.round(seed: generator!.next(), round: round)
            // The first round that fails says it all: stop there.
            guard refreshes == 1 else {
                Issue.record("round \(round): \(refreshes) refreshes reached the server")
                break
            }
            rounds += 1
        }
        #expect(rounds == Self.iterations)
    }

    /// One round: every request is rejected (held); some rejections arrive before the refresh,
    /// some while it is held at the server, the rest after it committed. Returns the refreshes
    /// the server saw.
    static func round(seed: UInt64, round: Int) async throws -> Int {
        var generator: SeededRandomNumberGenerator? = SeededRandomNumberGenerator(seed: seed)
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        harness.api.holdRejections(true)
        harness.server.holdsRefreshes = true
        let client = harness.client
        let requests = (0..<concurrentRequests).map { _ in
            Task { try await client.data(for: AuthorizerHarness.request) }
        }
        try await waitUntil { harness.api.heldCount == concurrentRequests }

        // Early: some rejections start the refresh, which the server holds.
        let early = Int.random(in: 1...40, using: &generator!)
        harness.api.releaseHeld(early, shuffledWith: &generator)
        try await harness.server.waitForHeldRefreshes(1, timeout: 300)
        // While it is out: more rejections join it.
        let during = Int.random(in: 0...40, using: &generator!)
        harness.api.releaseHeld(during, shuffledWith: &generator)
        harness.server.releaseHeldRefreshes()
        // Late: the rest arrive after the refresh committed.
        try await waitUntil { harness.provider.session?.accessToken != old }
        harness.api.releaseHeld(nil, shuffledWith: &generator)

        var statuses: [Int: Int] = [:]
        for request in requests {
            let (_, response) = try await withSafetyNet { try await request.value }
            statuses[response.statusCode, default: 0] += 1
        }
        #expect(statuses == [200: concurrentRequests], "round \(round): \(statuses)")
        let new = harness.provider.session?.accessToken
        let retries = harness.api.receivedTokens.dropFirst(concurrentRequests)
        #expect(
            retries.allSatisfy { $0 == new },
            "round \(round): every retry carries the new token (\(Set(retries).count) tokens seen)"
        )
        await harness.provider.waitUntilIdle()
        return harness.server.refreshCount
    }
}
