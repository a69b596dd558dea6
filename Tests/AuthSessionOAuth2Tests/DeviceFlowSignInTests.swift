import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// The device flow through the session manager (RFC 8628 §3.4, §3.5), on a manual clock against
/// the in-process server: every poll's time is exact, and nothing waits in real time.
@Suite struct DeviceFlowSignInTests {

    private let ada = ManagedUser(identifier: "ada", name: "Ada", email: "ada@example.com")

    /// A manager whose retry policy retries at once, three times: if polling ran through it, a
    /// pending answer would be polled again at the same instant, and the poll times would show it.
    private final class Harness: Sendable {
        let clock = ManualClock()
        let server: InProcessAuthorizationServer
        let store = MockSessionStore()
        let provider: ManagedSessionProvider

        init() {
            server = InProcessAuthorizationServer(clock: clock)
            provider = ManagedSessionProvider(
                store: store,
                remote: server,
                retryPolicy: RetryPolicy(maximumRetries: 3, initialDelay: 0),
                clock: clock,
                configuration: .init(checksCredentialState: false)
            )
        }

        /// A device code from the server, as `startDeviceAuthorization()` would return it.
        func authorize(
            interval: TimeInterval = 5,
            expiresIn: TimeInterval = 600,
            localExpiry: TimeInterval? = nil
        ) -> DeviceAuthorization {
            let issued = server.issueDeviceCode(interval: interval, expiresIn: expiresIn)
            return DeviceAuthorization(
                deviceCode: issued.deviceCode,
                userCode: issued.userCode,
                verificationURI: URL(string: "https://auth.example.com/device")!,
                expiresAt: localExpiry.map { clock.now.addingTimeInterval($0) } ?? issued.expiresAt,
                interval: interval
            )
        }

        /// The poll times, in seconds since `start`.
        func pollOffsets(since start: Date) -> [TimeInterval] {
            server.devicePollTimes.map { $0.timeIntervalSince(start) }
        }

        /// Lets the polling task reach its next wait (`sleepers` counts the manager's own timers
        /// too, once it holds a session), runs `before` (the user acts), then ends the earliest
        /// wait: one poll.
        func nextPoll(sleepers: Int = 1, before: () -> Void = {}) async throws {
            try await clock.waitForSleepers(sleepers, timeout: 300)
            before()
            clock.advanceToNextDeadline()
        }
    }

    /// The task's outcome, with a safety net so that a lost wake-up fails instead of hanging.
    private func outcome(
        of task: Task<ManagedSession, any Error>
    ) async throws -> Result<ManagedSession, ManagedSessionError> {
        let timeout = Task {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            task.cancel()
        }
        defer { timeout.cancel() }
        do {
            return .success(try await task.value)
        } catch let error as ManagedSessionError {
            return .failure(error)
        }
    }

    @Test func pollsAtTheServersIntervalAndSignsIn() async throws {
        let harness = Harness()
        let authorization = harness.authorize(interval: 5)
        let start = harness.clock.now
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        try await harness.nextPoll()
        try await harness.nextPoll()
        try await harness.nextPoll()
        try await harness.nextPoll { harness.server.approveDeviceCode(authorization.userCode, as: ada) }
        let session = try await outcome(of: signIn).get()

        #expect(harness.pollOffsets(since: start) == [5, 10, 15, 20], "one poll per interval, none in between")
        #expect(harness.server.obtainCount == 4, "a pending answer is not retried")
        #expect(session.user.identifier == "ada")
        #expect(session.user.name == "Ada")
        #expect(harness.provider.session == session)
        #expect(try harness.store.load() == session, "stored before it became the session")
    }

    @Test func slowDownAddsFiveSecondsForTheRestOfTheFlow() async throws {
        let harness = Harness()
        let authorization = harness.authorize(interval: 5)
        let start = harness.clock.now
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        try await harness.nextPoll()
        try await harness.nextPoll { harness.server.answerSlowDown(toNextPollsOf: authorization.userCode) }
        try await harness.nextPoll()
        try await harness.nextPoll { harness.server.approveDeviceCode(authorization.userCode, as: ada) }
        _ = try await outcome(of: signIn).get()
        #expect(harness.pollOffsets(since: start) == [5, 10, 20, 30])
    }

    @Test func transientFailuresBackOffThenTheIntervalReturns() async throws {
        let harness = Harness()
        let authorization = harness.authorize(interval: 5)
        harness.server.enqueueObtainFaults([.unavailable, .unavailable])
        let start = harness.clock.now
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        try await harness.nextPoll()  // 503
        try await harness.nextPoll()  // 503 again
        try await harness.nextPoll()  // pending
        try await harness.nextPoll { harness.server.approveDeviceCode(authorization.userCode, as: ada) }
        _ = try await outcome(of: signIn).get()
        #expect(
            harness.pollOffsets(since: start) == [5, 15, 35, 40],
            "twice the interval per failure in a row; the interval again after the server answers"
        )
    }

    @Test func expiredTokenFromTheServerEndsTheFlow() async throws {
        let harness = Harness()
        let authorization = harness.authorize(interval: 5)
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        try await harness.nextPoll()
        try await harness.nextPoll { harness.server.expireDeviceCode(authorization.userCode) }
        let error = try #require(try await outcome(of: signIn).failure)
        guard case .remote(let remote) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(remote.serverCode == "expired_token")
        #expect(remote.kind == .terminal)
        #expect(harness.server.obtainCount == 2)
        #expect(harness.provider.session == nil)
        #expect(harness.clock.sleeperCount == 0, "no poll is left waiting")
    }

    @Test func expiryOnTheClockEndsTheFlowWithoutAnotherPoll() async throws {
        let harness = Harness()
        // The server would keep answering pending (as some do past the expiry): the clock decides.
        let authorization = harness.authorize(interval: 5, localExpiry: 12)
        let start = harness.clock.now
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        try await harness.nextPoll()
        try await harness.nextPoll()
        try await harness.nextPoll()  // the wait ends at the expiry, 2 s later, and no poll follows
        let error = try #require(try await outcome(of: signIn).failure)
        guard case .remote(let remote) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(remote.serverCode == "expired_token")
        #expect(remote.kind == .terminal)
        #expect(harness.pollOffsets(since: start) == [5, 10])
        #expect(harness.clock.now == start.addingTimeInterval(12))
    }

    @Test func declinedEndsTheFlowAndKeepsTheSessionThereWas() async throws {
        let harness = Harness()
        harness.server.register(ada, password: "pw")
        let before = try await harness.provider.signIn(with: .password(username: "ada", password: "pw"))
        let authorization = harness.authorize(interval: 5)
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        // Two sleepers: the poll's wait and the session's proactive refresh.
        try await harness.nextPoll(sleepers: 2)
        try await harness.nextPoll(sleepers: 2) { harness.server.denyDeviceCode(authorization.userCode) }
        let error = try #require(try await outcome(of: signIn).failure)
        guard case .remote(let remote) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(remote.serverCode == "access_denied")
        #expect(remote.kind == .terminal)
        #expect(harness.provider.session == before, "a failed sign-in leaves the session there was")
    }

    @Test func cancellationMidWaitStopsPolling() async throws {
        let harness = Harness()
        let authorization = harness.authorize(interval: 5)
        let start = harness.clock.now
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        try await harness.nextPoll()
        try await harness.clock.waitForSleepers(1, timeout: 300)
        signIn.cancel()
        let error = try #require(try await outcome(of: signIn).failure)
        #expect(error == .cancelled)
        harness.clock.advance(by: 60)
        #expect(harness.pollOffsets(since: start) == [5], "no poll after the cancellation")
        #expect(harness.provider.session == nil)
    }

    @Test func aSignInMeanwhileSupersedesTheDeviceFlow() async throws {
        let harness = Harness()
        harness.server.register(ada, password: "pw")
        let authorization = harness.authorize(interval: 5)
        let signIn = Task { try await harness.provider.signIn(with: authorization) }
        try await harness.nextPoll()
        try await harness.clock.waitForSleepers(1, timeout: 300)
        let other = try await harness.provider.signIn(with: .password(username: "ada", password: "pw"))
        try await harness.nextPoll(sleepers: 2) {
            harness.server.approveDeviceCode(authorization.userCode, as: ada)
        }
        let error = try #require(try await outcome(of: signIn).failure)
        #expect(error == .superseded)
        #expect(harness.provider.session == other)
        await harness.provider.waitUntilIdle()
        #expect(harness.server.revokedTokens.count == 1, "the device flow's tokens are revoked")
    }

    /// A device code presented as a plain grant: one request, whatever the retry policy, since
    /// `authorization_pending` and `slow_down` are answers to poll later, not failures to retry.
    @Test(arguments: [false, true])
    func aDeviceCodeGrantIsNotRetriedWhilePending(slowDown: Bool) async throws {
        let harness = Harness()
        let authorization = harness.authorize(interval: 5)
        if slowDown {
            harness.server.answerSlowDown(toNextPollsOf: authorization.userCode)
        }
        let error = await #expect(throws: ManagedSessionError.self) {
            try await harness.provider.signIn(with: .deviceCode(authorization.deviceCode))
        }
        guard case .remote(let remote)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(remote.serverCode == (slowDown ? "slow_down" : "authorization_pending"))
        #expect(!remote.isRetryable)
        #expect(remote.kind == .transient, "nothing to sign out for")
        #expect(harness.server.obtainCount == 1)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
