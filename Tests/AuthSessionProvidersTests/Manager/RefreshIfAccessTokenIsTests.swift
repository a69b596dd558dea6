import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// `refresh(ifAccessTokenIs:)`: a refresh only while the rejected token is still the session's,
/// decided in the same step that starts or joins it.
@Suite struct RefreshIfAccessTokenIsTests {

    @Test("the rejected token is still the session's: one refresh, joined by every caller")
    func refreshesWhileTheTokenIsCurrent() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        harness.server.holdsRefreshes = true
        let provider = harness.provider
        let callers = (0..<10).map { _ in
            Task { try await provider.refresh(ifAccessTokenIs: first.accessToken) }
        }
        try await harness.server.waitForHeldRefreshes(1, timeout: 300)
        try await waitUntil(timeout: 300) { provider.waitingCallerCount == 10 }
        harness.server.releaseHeldRefreshes()
        var tokens: Set<String> = []
        for caller in callers {
            tokens.insert(try await caller.value.accessToken)
        }
        #expect(harness.server.refreshCount == 1)
        #expect(tokens.count == 1)
        #expect(!tokens.contains(first.accessToken))
    }

    @Test("the session's token is no longer the rejected one: it is returned, nothing refreshed")
    func returnsTheNewerToken() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        let second = try await harness.provider.refresh()
        #expect(harness.server.refreshCount == 1)

        let session = try await harness.provider.refresh(ifAccessTokenIs: first.accessToken)

        #expect(session.accessToken == second.accessToken)
        #expect(harness.server.refreshCount == 1)
    }

    @Test("a newer token about to expire is refreshed as validAccessToken would")
    func newerTokenStillNeedsValidity() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        let second = try await harness.provider.refresh()
        harness.clock.advance(by: 3590)

        let session = try await harness.provider.refresh(ifAccessTokenIs: first.accessToken, minimumValidity: 30)

        #expect(session.accessToken != second.accessToken)
        #expect(harness.server.refreshCount == 2)
    }

    @Test("no refresh token: refreshUnavailable, and the session is left as it is")
    func noRefreshToken() async throws {
        let clock = ManualClock()
        let now = clock.now.timeIntervalSince1970
        let stored = ManagedSession(
            accessToken: "at-without-refresh",
            refreshToken: nil,
            expiresAt: now + 3600,
            issuedAt: now,
            user: alice
        )
        let harness = ManagerHarness(stored: stored, clock: clock)
        await harness.settle()

        await #expect(throws: ManagedSessionError.refreshUnavailable) {
            try await harness.provider.refresh(ifAccessTokenIs: "at-without-refresh")
        }
        #expect(harness.provider.session == stored)
        #expect(try await harness.provider.refresh(ifAccessTokenIs: "another-token") == stored)
    }

    @Test("a misconfiguration that blocked the last refresh is not retried by rejections")
    func misconfigurationIsNotRetried() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.server.enqueueRefreshFaults([.invalidClient])
        await #expect(throws: ManagedSessionError.self) { try await harness.provider.validAccessToken() }
        for _ in 0..<5 {
            await #expect(throws: ManagedSessionError.self) {
                try await harness.provider.refresh(ifAccessTokenIs: first.accessToken)
            }
        }
        #expect(harness.server.refreshCount == 1, "one request, not six")
    }

    @Test("a refresh that failed transiently: rejections of its token fail with it until its backoff runs out")
    func transientFailureHoldsRejectionsBack() async throws {
        let harness = ManagerHarness(retryPolicy: RetryPolicy(maximumRetries: 0, initialDelay: 0))
        let first = try await harness.signIn()
        harness.server.enqueueRefreshFaults([.unavailable])
        let failure = try #require(
            await #expect(throws: ManagedSessionError.self) {
                try await harness.provider.refresh(ifAccessTokenIs: first.accessToken)
            }
        )
        #expect(!failure.endsSession)
        #expect(harness.server.refreshCount == 1)

        harness.clock.advance(by: 29)
        for _ in 0..<5 {
            await #expect(throws: failure) {
                try await harness.provider.refresh(ifAccessTokenIs: first.accessToken)
            }
        }
        #expect(harness.server.refreshCount == 1, "one request, not six")
        #expect(harness.provider.session == first)
        // A token that is not the rejected one is not held back.
        #expect(try await harness.provider.refresh(ifAccessTokenIs: "another-token") == first)

        // The backoff runs out: a rejection refreshes again.
        harness.clock.advance(by: 1)
        await harness.provider.waitUntilIdle()
        let refreshed = try await harness.provider.refresh(ifAccessTokenIs: first.accessToken)
        #expect(refreshed.accessToken != first.accessToken)
        #expect(harness.server.refreshCount == 2)
    }

    @Test("a refresh that failed transiently does not hold back an explicit refresh")
    func transientFailureDoesNotHoldBackExplicitRefresh() async throws {
        let harness = ManagerHarness(retryPolicy: RetryPolicy(maximumRetries: 0, initialDelay: 0))
        let first = try await harness.signIn()
        harness.server.enqueueRefreshFaults([.unavailable])
        await #expect(throws: ManagedSessionError.self) {
            try await harness.provider.refresh(ifAccessTokenIs: first.accessToken)
        }
        let refreshed = try await harness.provider.refresh()
        #expect(refreshed.accessToken != first.accessToken)
        #expect(harness.server.refreshCount == 2)
        // The new token, rejected in turn, is refreshed at once: the failure was the old token's.
        let again = try await harness.provider.refresh(ifAccessTokenIs: refreshed.accessToken)
        #expect(again.accessToken != refreshed.accessToken)
        #expect(harness.server.refreshCount == 3)
    }
}
