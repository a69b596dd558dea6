import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The retry after a rejection: only ever as the person the request was signed for, and no
/// second refresh of a token during the backoff after a failed one.
@Suite struct AuthorizedHTTPClientRetryTests {

    @Test("a rejected request is never sent again with another person's token")
    func rejectedRequestIsNotReplayedAsAnotherUser() async throws {
        let harness = AuthorizerHarness()
        let bob = ManagedUser(identifier: "bob", name: "Bob")
        harness.server.register(bob, password: "bob-password-123")
        let aliceToken = try await harness.signIn()
        harness.api.reject(aliceToken)
        harness.api.holdRejections(true)
        let client = harness.client
        let request = Task { try await client.data(for: AuthorizerHarness.request) }
        try await waitUntil { harness.api.heldCount == 1 }
        // Alice signs out and Bob signs in on the same device while Alice's request is out.
        try harness.provider.signout(with: nil)
        let bobToken = try await harness.provider.signIn(
            with: .password(username: "bob", password: "bob-password-123")
        ).accessToken
        harness.api.releaseAllHeld()

        let result = await withSafetyNetResult { try await request.value }

        #expect(harness.api.receivedTokens == [aliceToken])
        #expect(!harness.api.receivedTokens.contains(bobToken))
        #expect(result.isSuperseded, "\(result)")
        #expect(harness.provider.session?.accessToken == bobToken)
    }

    @Test("signed out and in again as the same person: the retry carries that person's new token")
    func sameIdentityAfterASignInIsRetried() async throws {
        let harness = AuthorizerHarness()
        let first = try await harness.signIn()
        harness.api.reject(first)
        harness.api.holdRejections(true)
        let client = harness.client
        let request = Task { try await client.data(for: AuthorizerHarness.request) }
        try await waitUntil { harness.api.heldCount == 1 }
        try harness.provider.signout(with: nil)
        let second = try await harness.signIn()
        harness.api.releaseAllHeld()

        let (_, response) = try await withSafetyNet { try await request.value }

        #expect(response.statusCode == 200)
        #expect(harness.api.receivedTokens == [first, second])
        #expect(harness.server.refreshCount == 0)
    }

    @Test("rejections of one token after its refresh failed: no second refresh during the backoff")
    func lateRejectionsAfterAFailedRefreshStartNoSecondRefresh() async throws {
        let harness = AuthorizerHarness()
        let old = try await harness.signIn()
        harness.api.reject(old)
        harness.api.holdRejections(true)
        harness.server.enqueueRefreshFaults([.unavailable])
        let client = harness.client
        let tasks = (0..<20).map { _ in
            Task { () -> Result<Int, AuthorizedRequestError> in
                do throws(AuthorizedRequestError) {
                    return .success(try await client.data(for: AuthorizerHarness.request).1.statusCode)
                } catch {
                    return .failure(error)
                }
            }
        }
        try await waitUntil { harness.api.heldCount == 20 }
        var none: SeededRandomNumberGenerator? = nil
        // The first rejections: one refresh, which fails (503).
        harness.api.releaseHeld(10, shuffledWith: &none)
        try await waitUntil { harness.server.refreshCount == 1 }
        try await withSafetyNet { await harness.provider.waitUntilIdle() }
        // The late rejections of the same token, the clock not yet past the backoff.
        harness.api.releaseAllHeld()
        var results: [Result<Int, AuthorizedRequestError>] = []
        for task in tasks { results.append(try await withSafetyNet { await task.value }) }

        #expect(harness.server.refreshCount == 1)
        for result in results {
            guard case .failure(.session(let error)) = result else {
                Issue.record("\(result)")
                continue
            }
            #expect(error.problem == .serverNotResponding, "\(error)")
            #expect(!error.endsSession)
        }
        #expect(harness.provider.session?.accessToken == old)
        // An explicit refresh is not held back.
        let refreshed = try await harness.provider.refresh()
        #expect(harness.server.refreshCount == 2)
        #expect(refreshed.accessToken != old)
    }
}

/// Which 401 rejects the token: the `WWW-Authenticate` challenges read as RFC 9110 §11.6.1 writes
/// them (white space around `=`, tabs, several challenges, quoted commas).
@Suite struct AuthorizedHTTPClientChallengeTests {

    private static func response(_ challenge: String) -> HTTPURLResponse {
        HTTPURLResponse(
            url: ScriptedResourceServer.url,
            statusCode: 401,
            httpVersion: "HTTP/1.1",
            headerFields: ["WWW-Authenticate": challenge]
        )!
    }

    @Test(
        "a Bearer challenge naming another error is no rejected token",
        arguments: [
            #"Bearer error="insufficient_scope""#,
            #"Bearer realm="api", error="insufficient_scope""#,
            #"Bearer error = "insufficient_scope""#,
            #"Bearer realm="api", error = "insufficient_scope""#,
            #"Bearer realm="api",error="insufficient_scope""#,
            "Bearer realm=\"api\",\terror\t=\t\"insufficient_scope\"",
            #"Bearer realm="a, b", error=insufficient_scope"#,
            #"Bearer realm="a \"q\", error=\"invalid_token\"", error="invalid_request""#,
            #"Basic realm="x", Bearer realm="api", error = "insufficient_scope""#,
            #"Newauth abc==, Bearer error = invalid_request, Basic realm="y""#,
            #"bearer ERROR="insufficient_scope""#,
        ]
    )
    func otherErrorIsNoRejection(challenge: String) {
        #expect(AuthorizedHTTPClient.bearerError(inChallenges: challenge) != "invalid_token")
        #expect(!AuthorizedHTTPClient.rejectsToken(Self.response(challenge)), "\(challenge)")
    }

    @Test(
        "invalid_token, a bare Bearer challenge or another scheme's challenge rejects the token",
        arguments: [
            #"Bearer error="invalid_token""#,
            #"Bearer realm="api", error = "invalid_token", error_description="expired""#,
            "Bearer\trealm=\"api\" ,\terror=invalid_token",
            #"Bearer"#,
            #"Bearer realm="api""#,
            #"Basic realm="x", error="insufficient_scope""#,
            #"Bearer realm="a, error=insufficient_scope""#,
            #"Basic realm="x", Bearer realm="y, z", error="invalid_token""#,
        ]
    )
    func rejection(challenge: String) {
        #expect(AuthorizedHTTPClient.rejectsToken(Self.response(challenge)), "\(challenge)")
    }

    @Test("the error's value: a token or a quoted string, escapes undone")
    func errorValue() {
        #expect(AuthorizedHTTPClient.bearerError(inChallenges: #"Bearer error = "a\"b""#) == #"a"b"#)
        #expect(AuthorizedHTTPClient.bearerError(inChallenges: #"Bearer error=a_b"#) == "a_b")
        #expect(AuthorizedHTTPClient.bearerError(inChallenges: #"Bearer realm="x""#) == nil)
        #expect(AuthorizedHTTPClient.bearerError(inChallenges: #"Basic error="invalid_request""#) == nil)
    }
}

/// The outcome of a request the test ran, for its expectations.
extension Result where Success == (Data, HTTPURLResponse) {
    var isSuperseded: Bool {
        guard case .failure(let error) = self, let error = error as? AuthorizedRequestError,
            case .session(.superseded) = error
        else { return false }
        return true
    }
}

/// Runs `body` under a safety net and keeps its outcome, a failure included.
func withSafetyNetResult<T: Sendable>(
    _ body: @escaping @Sendable () async throws -> T
) async -> Result<T, any Error> {
    do {
        return .success(try await withSafetyNet(300, body))
    } catch {
        return .failure(error)
    }
}
