import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Two managers with settings of their own, sharing one store, server and clock: an app and its
/// extension.
private struct Pair {
    let clock = ManualClock()
    let server: InProcessAuthorizationServer
    let store = MockSessionStore(postsChangeNotices: true)
    let app: ManagedSessionProvider
    let widget: ManagedSessionProvider
    private let handles: [AuthSessionHandle<ManagedSessionProvider>]

    private static func manager(
        lease: TimeInterval,
        store: MockSessionStore,
        server: InProcessAuthorizationServer,
        clock: ManualClock
    ) -> ManagedSessionProvider {
        ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                refreshLeaseDuration: lease
            )
        )
    }

    private static func handle(
        _ provider: ManagedSessionProvider,
        clock: ManualClock
    ) -> AuthSessionHandle<ManagedSessionProvider> {
        AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
    }

    init(appLease: TimeInterval = 120, widgetLease: TimeInterval = 120) async throws {
        server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        app = Self.manager(lease: appLease, store: store, server: server, clock: clock)
        let appHandle = Self.handle(app, clock: clock)
        try await app.signIn(with: .password(username: alice.identifier, password: alicePassword))
        await app.waitUntilIdle()
        // The widget starts once the app signed in: it restores the stored session.
        widget = Self.manager(lease: widgetLease, store: store, server: server, clock: clock)
        handles = [appHandle, Self.handle(widget, clock: clock)]
        await widget.waitUntilIdle()
        _ = try await widget.validSession(minimumValidity: 0)
    }
}

@Suite("One rule for a lease's standing, whatever a process's clock or settings")
struct LeaseRuleTests {

    @Test(
        "a clock set back during a live lease (90 s, an hour): the other process still waits for it, and the refresh token is presented once",
        arguments: [90.0, 3600.0]
    )
    func clockSetBackDuringLiveLease(setBack: TimeInterval) async throws {
        let pair = try await Pair()
        pair.server.holdsRefreshes = true
        let appRefresh = Task { try await pair.app.refresh() }
        try await pair.server.waitForHeldRefreshes(1, timeout: 300)
        #expect(pair.store.storedLease != nil)

        pair.clock.advance(by: -setBack)
        let widgetRefresh = Task { try await pair.widget.refresh() }
        try await waitUntil(timeout: 300) { pair.widget.leaseWaiterCount == 1 || pair.server.refreshCount > 1 }
        #expect(pair.server.refreshCount == 1, "the widget waits; it does not present the same token")

        pair.server.releaseHeldRefreshes()
        let appSession = try await appRefresh.value
        let widgetSession = try await widgetRefresh.value
        #expect(widgetSession.refreshToken == appSession.refreshToken, "the widget adopted the app's rotation")
        #expect(pair.server.refreshCount == 1)
        #expect(pair.server.duplicatePresentations.isEmpty)
    }

    @Test(
        "an extension with a shorter lease of its own honours the longer one the app recorded: no take-over mid-call"
    )
    func shorterOwnDurationHonoursRecordedLease() async throws {
        let pair = try await Pair(appLease: 300, widgetLease: 120)
        pair.server.holdsRefreshes = true
        let appRefresh = Task { try await pair.app.refresh() }
        try await pair.server.waitForHeldRefreshes(1, timeout: 300)
        let lease = try #require(pair.store.storedLease)
        #expect(lease.deadline - lease.startedAt == 300)

        let widgetRefresh = Task { try await pair.widget.refresh() }
        try await waitUntil(timeout: 300) { pair.widget.leaseWaiterCount == 1 || pair.server.refreshCount > 1 }
        // 200 s in: past the widget's own 120 s, inside the app's 300 s.
        for _ in 0..<100 {
            try await pair.clock.waitForSleepers(1, timeout: 300)
            pair.clock.advance(by: 2)
            try await waitUntil(timeout: 300) { pair.widget.leaseWaiterCount == 1 || pair.server.refreshCount > 1 }
        }
        #expect(pair.server.refreshCount == 1, "200 s into a 300 s lease: the widget still waits")
        pair.server.releaseHeldRefreshes()
        let appSession = try await appRefresh.value
        #expect(try await widgetRefresh.value.refreshToken == appSession.refreshToken)
        #expect(pair.server.duplicatePresentations.isEmpty)
    }

    @Test(
        "a lease from the future (a clock set back by an hour, or a hostile file) stands no longer than its recorded duration of this process's own time"
    )
    func futureLeaseBoundedByObservedTime() async throws {
        let pair = try await Pair()
        let refreshToken = try #require(pair.widget.session?.refreshToken)
        let start = pair.clock.now.timeIntervalSince1970 + 3600
        pair.store.recordLease(
            RefreshLease(
                owner: .init(processIdentifier: getpid(), instance: "from-the-future"),
                startedAt: start,
                deadline: start + 60,
                refreshTokenFingerprint: RefreshLease.fingerprint(of: refreshToken)
            )
        )
        let refresh = Task { try await pair.widget.refresh() }
        try await waitUntil(timeout: 300) { pair.widget.leaseWaiterCount == 1 }
        #expect(pair.server.refreshCount == 0, "it stands")
        for _ in 0..<29 {
            try await pair.clock.waitForSleepers(1, timeout: 300)
            pair.clock.advance(by: 2)
            try await waitUntil(timeout: 300) { pair.widget.leaseWaiterCount == 1 || pair.server.refreshCount > 0 }
        }
        #expect(pair.server.refreshCount == 0, "58 s of the widget's time into a 60 s lease")
        try await pair.clock.waitForSleepers(1, timeout: 300)
        pair.clock.advance(by: 3)
        _ = try await refresh.value
        #expect(pair.server.refreshCount == 1, "taken over after 60 s of its own time, not an hour later")
    }

    @Test("a lease recording more than the longest a lease may stand stands no longer than that")
    func recordedDurationIsCapped() async throws {
        let pair = try await Pair()
        let refreshToken = try #require(pair.widget.session?.refreshToken)
        let now = pair.clock.now.timeIntervalSince1970
        pair.store.recordLease(
            RefreshLease(
                owner: .init(processIdentifier: getpid(), instance: "a-year"),
                startedAt: now,
                deadline: now + 365 * 86_400,
                refreshTokenFingerprint: RefreshLease.fingerprint(of: refreshToken)
            )
        )
        let refresh = Task { try await pair.widget.refresh() }
        try await waitUntil(timeout: 300) { pair.widget.leaseWaiterCount == 1 }
        pair.clock.advance(by: RefreshLease.maximumDuration + 1)
        _ = try await refresh.value
        #expect(pair.server.refreshCount == 1)
        var configuration = ManagedSessionProvider.Configuration()
        configuration.refreshLeaseDuration = 86_400
        #expect(configuration.refreshLeaseDuration == RefreshLease.maximumDuration)
    }
}

@Suite("A sign-out removes only what it owns")
struct SignOutOwnsTests {

    @Test(
        "a process that heard a sign-out and then calls signout() (to tidy up) leaves alone the session another process signed in since"
    )
    func signedOutProcessLeavesNewSignInAlone() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        server.register(bob, password: bobPassword)
        let store = MockSessionStore(postsChangeNotices: true)
        let app = ManagerHarness(store: store, server: server, clock: clock)
        try await app.signIn(alice)
        let widget = ManagerHarness(store: store, server: server, clock: clock)
        await widget.settle()
        #expect(widget.provider.session?.user.identifier == alice.identifier)

        try app.provider.signout(with: nil)
        try await waitUntil(timeout: 300) { widget.provider.session == nil }
        await widget.settle()

        try await app.signIn(bob)
        await widget.settle()
        #expect(store.storedSession?.user.identifier == bob.identifier)

        try widget.provider.signout(with: nil)
        await widget.settle()
        await app.settle()
        #expect(store.storedSession?.user.identifier == bob.identifier, "bob's sign-in stays")
        #expect(app.provider.session?.user.identifier == bob.identifier)
    }
}

@Suite("An exchange cannot leave after its lease lapsed")
struct ExchangeAfterLapseTests {

    @Test(
        "a retry due after the lease lapsed on the uptime (the wall clock set back an hour meanwhile) is not sent: another process may have presented the token"
    )
    func retryAfterLapseIsNotSent() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: server,
            retryPolicy: RetryPolicy(maximumRetries: 2, initialDelay: 10, multiplier: 1),
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                refreshLeaseDuration: 60
            )
        )
        _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        await provider.waitUntilIdle()
        let sleeping = clock.sleeperCount
        server.enqueueRefreshFaults([.unavailable])
        let refresh = Task { () -> ManagedSessionError? in
            do throws(ManagedSessionError) {
                _ = try await provider.refresh()
                return nil
            } catch {
                return error
            }
        }
        // The first presentation was answered 503; the retry waits 10 s, the watchdog until the
        // cutoff (55 s).
        try await clock.waitForSleepers(sleeping + 2, timeout: 300)
        #expect(server.refreshLog.count == 1)
        // The wall clock goes back an hour, then an hour and 10 s pass: the retry is due on the
        // wall clock, the lease lapsed long ago on the uptime.
        clock.advance(by: -3600)
        clock.advance(by: 3610)
        let error = await refresh.value
        #expect(server.refreshLog.count == 1, "the refresh token was presented again after the lease lapsed")
        guard case .remote(let remote)? = error else {
            Issue.record("expected the refresh to fail as a timeout, got \(String(describing: error))")
            return
        }
        #expect(remote.reason == .timedOut)
        #expect(provider.session != nil, "a timeout signs no one out")
    }
}
