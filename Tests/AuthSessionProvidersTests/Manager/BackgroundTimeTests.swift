import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// A background-task assertion whose time the test ends: every assertion begun is recorded, and
/// ``expireAll()`` runs their expiry handlers as the system would.
final class ManualBackgroundTask: BackgroundTaskAssertion {
    private struct Assertion {
        let name: String
        var expired: (@Sendable () -> Void)?
        var ended = false
    }

    private let assertions = ConcurrencySafeContainer<[Assertion]>([])
    /// Whether assertions begun from now on have no time at all.
    let grantsNoTime = ConcurrencySafeContainer(false)

    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        let (index, immediate) = assertions.withLock { assertions -> (Int, Bool) in
            assertions.append(Assertion(name: name, expired: expired))
            return (assertions.count - 1, grantsNoTime.withLock { $0 })
        }
        if immediate { expire(index) }
        return BackgroundTaskToken { [self] in
            assertions.withLock { $0[index].ended = true }
        }
    }

    /// The names of the assertions begun and not ended.
    var running: [String] {
        assertions.withLock { $0.filter { !$0.ended }.map(\.name) }
    }

    /// Runs the expiry handler of every running assertion, once.
    func expireAll() {
        let count = assertions.withLock { $0.count }
        for index in 0..<count { expire(index) }
    }

    private func expire(_ index: Int) {
        let handler = assertions.withLock { assertions -> (@Sendable () -> Void)? in
            guard !assertions[index].ended else { return nil }
            defer { assertions[index].expired = nil }
            return assertions[index].expired
        }
        handler?()
    }
}

@Suite("When the system's background time runs out, no store access starts")
struct BackgroundTimeTests {

    private static func manager(
        background: ManualBackgroundTask,
        stored session: ManagedSession? = nil,
        store: MockSessionStore,
        server: InProcessAuthorizationServer,
        clock: ManualClock,
        activation: ManualActivationSignal
    ) -> ManagedSessionProvider {
        ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: activation,
                backgroundTask: background
            )
        )
    }

    @Test(
        "rotated tokens that arrive after the expiry are kept unsaved, the store untouched and the lease left to lapse; the next activation writes them"
    )
    func expiryDuringExchangeKeepsTokensUnsaved() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        await harness.settle()
        let background = ManualBackgroundTask()
        let provider = Self.manager(
            background: background,
            store: harness.store,
            server: harness.server,
            clock: harness.clock,
            activation: harness.activation
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: harness.activation,
            clock: harness.clock
        )
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        let before = try #require(provider.session)

        harness.server.holdsRefreshes = true
        let refresh = Task { try await provider.refresh() }
        try await harness.server.waitForHeldRefreshes(1, timeout: 300)
        #expect(background.running == ["AuthSessionKit.refresh"])
        let lease = try #require(harness.store.storedLease, "the lease was recorded before the expiry")
        let accessesBefore = harness.store.exclusiveAccessCount
        let savesBefore = harness.store.saveCount

        background.expireAll()
        harness.server.releaseHeldRefreshes()
        let refreshed = try await refresh.value
        #expect(refreshed.refreshToken != before.refreshToken, "the rotated tokens are the session now")
        #expect(provider.session?.refreshToken == refreshed.refreshToken)
        #expect(harness.store.exclusiveAccessCount == accessesBefore, "no exclusive access after the expiry")
        #expect(harness.store.saveCount == savesBefore)
        #expect(harness.store.storedLease == lease, "the lease is left to lapse")
        #expect(harness.store.storedSession?.refreshToken == before.refreshToken)

        // The app comes back: the retried write lands (the store still holds what it replaced).
        harness.activation.fire()
        try await harness.store.waitForSaveCount(savesBefore + 1, timeout: 60)
        await provider.waitUntilIdle()
        #expect(harness.store.storedSession?.refreshToken == refreshed.refreshToken)
        _ = handle
    }

    @Test("a refresh whose assertion gets no time at all fails as the store being unavailable, and takes no lock")
    func noTimeNoAccess() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        await harness.settle()
        let background = ManualBackgroundTask()
        background.grantsNoTime.withLock { $0 = true }
        let provider = Self.manager(
            background: background,
            store: harness.store,
            server: harness.server,
            clock: harness.clock,
            activation: ManualActivationSignal()
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: harness.clock
        )
        await provider.waitUntilIdle()
        let accessesBefore = harness.store.exclusiveAccessCount
        let refreshesBefore = harness.server.refreshCount
        await #expect(throws: ManagedSessionError.storage(BackgroundTime.expiredError)) {
            try await provider.refresh()
        }
        #expect(harness.store.exclusiveAccessCount == accessesBefore)
        #expect(harness.server.refreshCount == refreshesBefore, "nothing was presented")
        #expect(provider.session != nil, "the session stands")
        _ = handle
    }

    @Test(
        "the expiring activity over the system's performer: the granted block is held until the work ends; an expiry tells the work and lets the block return; no time at all tells it at once"
    )
    func expiringActivity() async throws {
        // A performer that runs the block on a thread of its own, as the system does, and can
        // call it again with `expired` true.
        final class System: Sendable {
            let blocks = ConcurrencySafeContainer<[@Sendable (Bool) -> Void]>([])
            let returned = ConcurrencySafeContainer(0)
            let grants: Bool
            init(grants: Bool) { self.grants = grants }
            var performer: ExpiringActivityAssertion.Performer {
                { [self] _, block in
                    blocks.withLock { $0.append(block) }
                    let thread = Thread { [self] in
                        block(!grants)
                        returned.withLock { $0 += 1 }
                    }
                    thread.start()
                }
            }
            func expire() {
                for block in blocks.withLock({ $0 }) { block(true) }
            }
        }

        let ended = System(grants: true)
        let expiredCount = ConcurrencySafeContainer(0)
        let token = ExpiringActivityAssertion(performer: ended.performer).begin("work") {
            expiredCount.withLock { $0 += 1 }
        }
        try await waitUntil(timeout: 300) { ended.blocks.withLock { $0.count } == 1 }
        #expect(ended.returned.withLock { $0 } == 0, "the granted block is held while the work runs")
        token.end()
        try await waitUntil(timeout: 300) { ended.returned.withLock { $0 } == 1 }
        ended.expire()
        #expect(expiredCount.withLock { $0 } == 0, "an activity that ended is not told of a later expiry")

        let expiring = System(grants: true)
        let told = ConcurrencySafeContainer(0)
        let second = ExpiringActivityAssertion(performer: expiring.performer).begin("work") {
            told.withLock { $0 += 1 }
        }
        try await waitUntil(timeout: 300) { expiring.blocks.withLock { $0.count } == 1 }
        expiring.expire()
        try await waitUntil(timeout: 300) { expiring.returned.withLock { $0 } == 1 }
        #expect(told.withLock { $0 } == 1, "the work is told once")
        second.end()

        let none = System(grants: false)
        let toldAtOnce = ConcurrencySafeContainer(0)
        _ = ExpiringActivityAssertion(performer: none.performer).begin("work") {
            toldAtOnce.withLock { $0 += 1 }
        }
        try await waitUntil(timeout: 300) { toldAtOnce.withLock { $0 } == 1 }
    }
}
