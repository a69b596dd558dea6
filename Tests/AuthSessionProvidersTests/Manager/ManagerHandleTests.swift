import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The manager as a handle's provider: the launch, a sign-in before the handle exists, and a
/// proxy that calls back into the manager.
@Suite("The manager behind a handle")
struct ManagerHandleTests {

    @Test(
        "a valid stored session is signed in before the handle's initializer returns; a due one keeps it syncing"
    )
    func launchDoesNotFlash() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let activation = ManualActivationSignal()
        let stored = try await advIssued(server, advAda, clock)
        func makeHandle(
            _ store: MockSessionStore
        ) -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
            let provider = ManagedSessionProvider(
                store: store,
                remote: server,
                retryPolicy: .never,
                clock: clock,
                configuration: .init(checksCredentialState: false, activationSignal: activation)
            )
            return (
                provider,
                AuthSessionHandle(
                    sessionProvider: provider,
                    biometricAuthenticator: MockBiometricAuthenticator(),
                    activationSignal: activation,
                    clock: clock
                )
            )
        }
        let (_, valid) = makeHandle(MockSessionStore(session: stored))
        #expect(valid.sessionStatus == .signedIn)

        clock.advance(by: 3600 - 30)
        server.holdsRefreshes = true
        let (dueProvider, due) = makeHandle(MockSessionStore(session: stored))
        #expect(due.sessionStatus == .syncing)
        try await server.waitForHeldRefreshes(1)
        server.enqueueRefreshFaults([.unavailable])  // a transient failure at launch
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        await dueProvider.waitUntilIdle()
        await due.waitUntilIdle()
        #expect(due.sessionStatus == .signedIn, "a transient launch failure keeps the session")
    }

    @Test("a sign-in made before the handle exists reaches the handle: it does not stay on its splash screen")
    func signInBeforeTheHandleReachesIt() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let activation = ManualActivationSignal()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: server,
            retryPolicy: .never,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: activation)
        )
        try await provider.signIn(with: advGrant(advAda))
        #expect(try await provider.validAccessToken().isEmpty == false, "the manager itself works")

        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        activation.fire()
        await handle.waitUntilIdle()

        #expect(
            handle.sessionStatus == .signedIn,
            "launch() saw phase .ready and published nothing: \(handle.sessionStatus)"
        )
    }

    @Test("a proxy that calls back into the provider from inside publish deadlocks nothing")
    func reentrantPublishDoesNotDeadlock() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        let provider = rig.provider
        let flips = ConcurrencySafeContainer(0)
        rig.log.setHook { event in
            _ = provider.session
            _ = provider.isBioMetricAuthenticationEnabled
            let flip = flips.withLock { count -> Int in
                count += 1
                return count
            }
            if case .sessionUpdated = event, flip < 20 {
                provider.setBioMetricAuthentication(!provider.isBioMetricAuthenticationEnabled)
            }
            if case .sessionFetchFailed = event {
                provider.handleCredentialRevocation()
            }
        }
        for _ in 0..<10 {
            _ = try await rig.provider.refresh()
        }
        server.enqueueRefreshFaults([.unavailable])
        _ = try? await rig.provider.refresh()  // sessionFetchFailed → revocation from inside publish
        await rig.provider.waitUntilIdle()
        #expect(rig.provider.session == nil)
        #expect(rig.log.signOutCount == 1)
        try await rig.provider.signIn(with: advGrant(advBob))
        try rig.provider.signout()
        await rig.provider.waitUntilIdle()
        #expect(rig.log.signOutCount == 2)
    }
}
