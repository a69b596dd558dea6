import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The in-process server; refreshes wait at a gate (a server that does not answer yet).
private struct GatedRefreshRemote: RemoteAuthService {
    let server: InProcessAuthorizationServer
    let gate = AsyncGate()
    let entered = ConcurrencySafeContainer(0)

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        try await server.obtainTokens(with: grant)
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        entered.withLock { $0 += 1 }
        await gate.wait()
        return try await server.refresh(refreshToken, scope: scope)
    }

    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        try await server.revoke(token, kind: kind)
    }

    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        try await server.credentialState(for: session)
    }
}

/// Runs `body` on wall time after `seconds`: a safety net that unblocks a test whose subject hangs.
private func watchdog(after seconds: TimeInterval, _ body: @escaping @Sendable () -> Void) {
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: body)
}

@Suite("Adversary27: waitUntilSessionChangesHandled(timeout:)")
struct Adversary27SessionChangesTests {

    private static func manager(
        remote: any RemoteAuthService,
        clock: ManualClock,
        observer: RecordingObserver? = nil
    ) -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: remote,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                backgroundTask: nil,
                observer: observer
            )
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        return (provider, handle)
    }

    @Test("a refresh the server has not answered yet: the wait still ends by its timeout (false)")
    func busyManagerDoesNotHoldTheWaitPastItsTimeout() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let remote = GatedRefreshRemote(server: server)
        let (provider, handle) = Self.manager(remote: remote, clock: clock)
        await provider.waitUntilLaunchSettled()
        _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        let refresh = Task { try? await provider.refresh() }
        try await waitUntil(timeout: 300) { remote.entered.withLock { $0 } == 1 }
        // Unblocks the server after 120 s of wall time whatever happens (a safety net).
        watchdog(after: 120) { remote.gate.open() }
        let started = Date()
        let result = await provider.waitUntilSessionChangesHandled(timeout: 0.5)
        let elapsed = Date().timeIntervalSince(started)
        remote.gate.open()
        _ = await refresh.value
        #expect(elapsed < 60, "waitUntilSessionChangesHandled(timeout: 0.5) returned after \(elapsed) s")
        #expect(result == false, "it said the changes were handled while a refresh was still in flight")
        _ = handle
    }

    @Test("an observer that is slow: the wait still ends by its timeout")
    func slowObserverDoesNotHoldTheWaitPastItsTimeout() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let observer = RecordingObserver()
        let (provider, handle) = Self.manager(remote: server, clock: clock, observer: observer)
        await provider.waitUntilLaunchSettled()
        observer.holdNext()
        _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        watchdog(after: 120) { observer.release() }
        let started = Date()
        _ = await provider.waitUntilSessionChangesHandled(timeout: 0.5)
        let elapsed = Date().timeIntervalSince(started)
        observer.release()
        #expect(elapsed < 60, "waitUntilSessionChangesHandled(timeout: 0.5) returned after \(elapsed) s")
        _ = handle
    }

    @Test(
        "a loop whose body starts a refresh (without awaiting it): the wait does not say 'handled' while that refresh is in flight"
    )
    func loopThatStartsWorkOnTheManager() async throws {
        var violations = 0
        for _ in 0..<5 {
            let clock = ManualClock()
            let server = InProcessAuthorizationServer(clock: clock)
            server.register(alice, password: alicePassword)
            let remote = GatedRefreshRemote(server: server)
            let (provider, handle) = Self.manager(remote: remote, clock: clock)
            await provider.waitUntilLaunchSettled()
            let bodyGate = AsyncGate()
            let started = ConcurrencySafeContainer(false)
            let loop = Task {
                for await (event, _) in provider.sessionChanges {
                    started.withLock { $0 = true }
                    if case .signedIn = event {
                        await bodyGate.wait()
                        // A view model that, once signed in, asks for fresh tokens in the background.
                        Task { _ = try? await provider.refresh() }
                        while remote.entered.withLock({ $0 }) == 0 { await Task.yield() }
                    }
                }
            }
            try await waitUntil(timeout: 300) { started.withLock { $0 } }
            #expect(await provider.waitUntilSessionChangesHandled(timeout: 300))
            _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
            await provider.waitUntilIdle()
            let wait = Task { await provider.waitUntilSessionChangesHandled(timeout: 300) }
            for _ in 0..<50 { await Task.yield() }
            bodyGate.open()
            try await waitUntil(timeout: 300) { remote.entered.withLock { $0 } >= 1 }
            // The refresh the body started is held at the server: the manager is not idle, so
            // no wait may say "handled" now (a short one must end false, on its time).
            if await provider.waitUntilSessionChangesHandled(timeout: 0.3) { violations += 1 }
            remote.gate.open()
            #expect(await wait.value, "the wait did not end once the refresh was answered")
            loop.cancel()
            _ = handle
        }
        #expect(
            violations == 0,
            "in \(violations) of 5 rounds the wait returned while a refresh the loop started was still at the server"
        )
    }

    @Test("many concurrent waits on one busy loop all end true once it asks again, and false on time when it does not")
    func concurrentWaits() async throws {
        let harness = ManagerHarness()
        let gate = AsyncGate()
        let handled = ConcurrencySafeContainer(0)
        let loop = Task {
            for await _ in harness.provider.sessionChanges {
                handled.withLock { $0 += 1 }
                await gate.wait()
            }
        }
        try await waitUntil(timeout: 300) { handled.withLock { $0 } == 1 }
        let shortOnes = (0..<20).map { _ in Task { await harness.provider.waitUntilSessionChangesHandled(timeout: 0.2) }
        }
        for task in shortOnes { #expect(await task.value == false) }
        let waits = (0..<50).map { _ in Task { await harness.provider.waitUntilSessionChangesHandled(timeout: 300) } }
        gate.open()
        for task in waits { #expect(await task.value) }
        loop.cancel()
        _ = harness.handle
    }

    @Test("a loop that breaks out, and an iterator that is dropped, are not waited for")
    func brokenLoopIsNotWaitedFor() async throws {
        let harness = ManagerHarness()
        let first = Task { () -> Bool in
            for await _ in harness.provider.sessionChanges { return true }
            return false
        }
        #expect(await first.value)
        do {
            var iterator = harness.provider.sessionChanges.makeAsyncIterator()
            _ = await iterator.next()
        }
        #expect(await harness.provider.waitUntilSessionChangesHandled(timeout: 300))
        _ = harness.handle
    }

    /// Reviewed: the documented rule is that a cancelled loop whose body is still running
    /// leaves when the body asks for its next change (its body for the change has not run to its
    /// end, so the view model is not current). So: busy (false) until then, not waited for after.
    @Test(
        "a loop cancelled while it is busy inside its body counts until its body asks again, and is not waited for once it has"
    )
    func cancelledBusyLoopIsNotWaitedFor() async throws {
        let harness = ManagerHarness()
        let never = AsyncGate()
        let handled = ConcurrencySafeContainer(0)
        let loop = Task {
            for await _ in harness.provider.sessionChanges {
                handled.withLock { $0 += 1 }
                await never.wait()
            }
        }
        try await waitUntil(timeout: 300) { handled.withLock { $0 } == 1 }
        loop.cancel()
        #expect(await harness.provider.waitUntilSessionChangesHandled(timeout: 0.2) == false, "its body still runs")
        never.open()
        _ = await loop.value
        #expect(
            await harness.provider.waitUntilSessionChangesHandled(timeout: 300),
            "a cancelled loop held the wait after its body ended"
        )
        _ = harness.handle
    }
}
