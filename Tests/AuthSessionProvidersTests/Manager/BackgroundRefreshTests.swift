import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// A store that runs `afterLeaseRecorded` once the exclusive access in which a lease was recorded
/// has ended: the moment between a refresh's claim and its request.
private final class LeaseHookStore: SessionStore {
    let inner: MockSessionStore
    let afterLeaseRecorded = ConcurrencySafeContainer<(@Sendable () -> Void)?>(nil)
    private let recordedInAccess = ConcurrencySafeContainer(false)

    init(_ inner: MockSessionStore) { self.inner = inner }

    func load() throws(SessionStoreError) -> ManagedSession? { try inner.load() }
    func save(_ session: ManagedSession) throws(SessionStoreError) { try inner.save(session) }
    func remove() throws(SessionStoreError) { try inner.remove() }
    func loadLease() throws(SessionStoreError) -> RefreshLease? { try inner.loadLease() }
    func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) {
        try inner.saveLease(lease)
        if lease != nil { recordedInAccess.withLock { $0 = true } }
    }
    var changeNotifier: (any SessionChangeNotifier)? { inner.changeNotifier }

    func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        let result = try inner.withExclusiveAccess(body)
        runHookIfLeaseRecorded()
        return result
    }

    func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        let result = try inner.withExclusiveAccessIfAvailable(body)
        runHookIfLeaseRecorded()
        return result
    }

    private func runHookIfLeaseRecorded() {
        guard
            recordedInAccess.withLock({ recorded in
                defer { recorded = false }
                return recorded
            })
        else { return }
        let hook = afterLeaseRecorded.withLock { hook in
            defer { hook = nil }
            return hook
        }
        hook?()
    }
}

@Suite("A background refresh for BGAppRefreshTask: refreshes when due, says when to come back, ends at once on expiry")
struct BackgroundRefreshTests {

    /// A signed-in manager on a manual clock; the server issues one-hour tokens.
    private static func signedIn() async throws -> (ManagerHarness, ManagedSessionProvider) {
        let harness = ManagerHarness()
        try await harness.signIn()
        await harness.settle()
        return (harness, harness.provider)
    }

    @Test("a token valid beyond the horizon is not refreshed; the next refresh is asked for a horizon before it is due")
    func notDue() async throws {
        let (harness, provider) = try await Self.signedIn()
        let session = try #require(provider.session)
        let result = await provider.backgroundRefresh(horizon: 900).run()
        #expect(result.outcome == .notDue)
        #expect(result.isSuccess)
        #expect(harness.server.refreshCount == 0)
        let due = session.expiresAt - 60
        #expect(result.nextRefreshDate == Date(timeIntervalSince1970: due - 900))
    }

    @Test("a token due within the horizon is refreshed now, and the next refresh follows the new token")
    func dueWithinHorizon() async throws {
        let (harness, provider) = try await Self.signedIn()
        let session = try #require(provider.session)
        harness.clock.advance(by: session.expiresAt - 600 - harness.clock.now.timeIntervalSince1970)
        let result = await provider.backgroundRefresh(horizon: 900).run()
        #expect(result.outcome == .refreshed)
        #expect(result.isSuccess)
        #expect(harness.server.refreshCount == 1)
        let refreshed = try #require(provider.session)
        #expect(refreshed.refreshToken != session.refreshToken)
        #expect(result.nextRefreshDate == Date(timeIntervalSince1970: refreshed.expiresAt - 60 - 900))
    }

    @Test("nobody signed in: nothing to do, and nothing to schedule")
    func notSignedIn() async throws {
        let harness = ManagerHarness()
        await harness.settle()
        let result = await harness.provider.backgroundRefresh().run()
        #expect(result.outcome == .notSignedIn)
        #expect(result.isSuccess)
        #expect(result.nextRefreshDate == nil)
    }

    @Test(
        "the system's time runs out while the server holds the refresh: run returns expired at once, and the task can complete"
    )
    func expiresAtOnce() async throws {
        let (harness, provider) = try await Self.signedIn()
        let session = try #require(provider.session)
        harness.clock.advance(by: session.expiresAt - 30 - harness.clock.now.timeIntervalSince1970)
        harness.server.holdsRefreshes = true
        let refresh = provider.backgroundRefresh()
        let run = Task { await refresh.run() }
        try await harness.server.waitForHeldRefreshes(1, timeout: 300)
        refresh.expire()
        let result = await run.value
        #expect(result.outcome == .expired)
        #expect(!result.isSuccess)
        #expect(result.nextRefreshDate != nil, "the session stands: come back later")
        harness.server.releaseHeldRefreshes()
        await provider.waitUntilIdle()
        #expect(provider.session?.refreshToken != session.refreshToken, "the rotated tokens are kept")
    }

    @Test(
        "an expiry after the lease is recorded and before the token leaves: nothing is sent, and the lease is given back"
    )
    func expiryBeforeTheTokenLeaves() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let session = try await issuedSession(by: server, at: clock)
        let inner = MockSessionStore(session: session)
        let store = LeaseHookStore(inner)
        let activation = ManualActivationSignal()
        let provider = ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: activation)
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
        defer { withExtendedLifetime(handle) {} }
        await provider.waitUntilIdle()
        // Due within the horizon, not yet for the timer.
        clock.advance(by: session.expiresAt - 600 - clock.now.timeIntervalSince1970)
        await provider.waitUntilIdle()
        let refresh = provider.backgroundRefresh()
        store.afterLeaseRecorded.withLock { $0 = { refresh.expire() } }
        let result = await refresh.run()
        #expect(result.outcome == .expired)
        await provider.waitUntilIdle()
        #expect(server.refreshCount == 0, "nothing was sent")
        #expect(inner.storedLease == nil, "the lease was given back")
        #expect(provider.session?.refreshToken == session.refreshToken, "the session stands")
    }

    @Test("an unsent lease is either presented under or abandoned, never both: 2,000 races")
    func unsentLeaseRaces() async {
        let lease = RefreshLease(
            owner: .init(processIdentifier: 1, instance: "race"),
            startedAt: 0,
            deadline: 120,
            refreshTokenFingerprint: RefreshLease.fingerprint(of: "rt")
        )
        for _ in 0..<2_000 {
            let unsent = UnsentLease(lease)
            let outcomes = ConcurrencySafeContainer<[Bool]>([])
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    let won = unsent.startPresenting()
                    outcomes.withLock { $0.append(won) }
                }
                group.addTask {
                    let won = unsent.abandon()
                    outcomes.withLock { $0.append(won) }
                }
            }
            #expect(outcomes.withLock { $0.filter { $0 }.count } == 1)
        }
    }
}
