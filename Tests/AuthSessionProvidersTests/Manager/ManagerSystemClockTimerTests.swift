import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The manager's timers on the system clock, which wait on the process's shared timers instead of
/// a sleeping task each (the other tests drive a manual clock, whose timers are tasks).
@Suite("The manager's timers on the system clock")
struct ManagerSystemClockTimerTests {

    private func rig(lifetime: TimeInterval) -> (InProcessAuthorizationServer, ManagedSessionProvider, AdvEventLog) {
        let server = InProcessAuthorizationServer(clock: SystemClock(), accessTokenLifetime: lifetime)
        server.register(advAda, password: advPassword)
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: server,
            retryPolicy: .never,
            clock: SystemClock(),
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let log = AdvEventLog()
        provider.initializeSessionProvider(for: log.proxy)
        return (server, provider, log)
    }

    @Test("the proactive refresh runs at its time, with no call and no activation")
    func proactiveRefreshRunsOnTheSystemClock() async throws {
        // A two-second token: the margin is half its lifetime, and no refresh comes earlier than
        // ten seconds after the token's issue (the machine's floor), so one is due then.
        let (server, provider, _) = rig(lifetime: 2)
        _ = try await provider.signIn(with: advGrant(advAda))
        #expect(provider.state.withLock { $0.tasks[.refresh] } != nil, "no refresh timer was armed")
        let refreshed = await advEventually(timeout: 120) { server.refreshCount >= 1 }
        #expect(refreshed, "the timer did not fire")
        try provider.signout()
        await provider.waitUntilIdle()
    }

    @Test("a sign-out disarms the shared timer itself, and the manager is idle at once")
    func signOutDisarmsTheTimer() async throws {
        let (_, provider, _) = rig(lifetime: 3_600)
        _ = try await provider.signIn(with: advGrant(advAda))
        let armed = try #require(provider.state.withLock { $0.tasks[.refresh] }, "no refresh timer was armed")
        guard case .shared(let timer) = armed.timer else {
            Issue.record("the system clock's timer is a task, not a shared timer")
            return
        }
        try provider.signout()
        await provider.waitUntilIdle()
        #expect(provider.state.withLock { $0.tasks[.refresh] } == nil)
        #expect(!timer.cancel(), "the sign-out left the timer armed in the shared queue")
    }

    @Test("a released manager leaves no timer armed: what its timer held is let go at once")
    func releasedManagerDisarms() async throws {
        weak var released: ManagedSessionProvider?
        var armed: ArmedTimer?
        do {
            let (_, provider, _) = rig(lifetime: 3_600)
            _ = try await provider.signIn(with: advGrant(advAda))
            await provider.waitUntilIdle()
            armed = provider.state.withLock { $0.tasks[.refresh] }?.timer
            released = provider
        }
        #expect(released == nil, "the armed timer kept the manager")
        guard case .shared(let timer) = try #require(armed, "no refresh timer was armed") else {
            Issue.record("the system clock's timer is a task, not a shared timer")
            return
        }
        #expect(!timer.cancel(), "the released manager's timer is still armed")
    }
}
