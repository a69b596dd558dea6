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

/// Two managers sharing one store (and one server and clock) stand for two processes sharing it:
/// an app and its extension. The mock store records leases and posts a notice after each write,
/// as a file store does between processes.
private struct TwoProcesses {
    let clock = ManualClock()
    let server: InProcessAuthorizationServer
    let store = MockSessionStore(postsChangeNotices: true)
    let app: ManagerHarness
    let widget: ManagerHarness

    /// Signs `user` in through the app, then launches the widget on the stored session.
    init(signedIn user: ManagedUser = alice, namesUsers: Bool = true) async throws {
        server = InProcessAuthorizationServer(clock: clock)
        server.namesUsers = namesUsers
        app = ManagerHarness(store: store, server: server, clock: clock)
        try await app.signIn(user)
        widget = ManagerHarness(store: store, server: server, clock: clock)
        await app.settle()
        await widget.settle()
    }
}

@Suite("Processes sharing a store: leases, change notices, identity without a subject")
struct SharedStoreTests {

    // MARK: - The lease

    @Test(
        "a refresh held at the server holds no lock: the widget waits for the app's lease, then adopts its rotation: one request"
    )
    func waitsForLeaseAndAdopts() async throws {
        let processes = try await TwoProcesses()
        let (app, widget, server, store) = (processes.app, processes.widget, processes.server, processes.store)
        server.holdsRefreshes = true
        let appRefresh = Task { try await app.provider.refresh() }
        try await server.waitForHeldRefreshes(1, timeout: 300)
        let lease = try #require(store.storedLease, "the app recorded its lease before presenting")
        #expect(lease.covers(app.provider.session?.refreshToken))

        let widgetRefresh = Task { try await widget.provider.refresh() }
        try await waitUntil(timeout: 300) { widget.provider.leaseWaiterCount == 1 }
        #expect(server.refreshCount == 1, "the widget waits; it does not present the same token")

        server.releaseHeldRefreshes()
        let appSession = try await appRefresh.value
        let widgetSession = try await widgetRefresh.value
        #expect(widgetSession.accessToken == appSession.accessToken, "the widget adopted the app's rotation")
        #expect(server.refreshCount == 1)
        #expect(server.duplicatePresentations.isEmpty)
        #expect(store.storedLease == nil, "the commit cleared the lease")
        await widget.settle()
        #expect(widget.provider.session?.refreshToken == appSession.refreshToken)
    }

    @Test("a lease whose owner is gone is taken over at once")
    func ownerGoneIsTakenOver() async throws {
        let processes = try await TwoProcesses()
        let (widget, server, store) = (processes.widget, processes.server, processes.store)
        let refreshToken = try #require(widget.provider.session?.refreshToken)
        let gone = try exitedProcessIdentifier()
        store.recordLease(
            RefreshLease(
                owner: .init(processIdentifier: gone, instance: "killed-mid-refresh"),
                startedAt: processes.clock.now.timeIntervalSince1970,
                deadline: processes.clock.now.timeIntervalSince1970 + 120,
                refreshTokenFingerprint: RefreshLease.fingerprint(of: refreshToken)
            )
        )
        _ = try await widget.provider.refresh()
        #expect(server.refreshCount == 1)
        #expect(store.storedLease == nil)
    }

    @Test("a running owner's lease blocks until its deadline on the clock, then is taken over")
    func deadlinePassesThenTakenOver() async throws {
        let processes = try await TwoProcesses()
        let (widget, server, store, clock) = (processes.widget, processes.server, processes.store, processes.clock)
        let refreshToken = try #require(widget.provider.session?.refreshToken)
        // This process is running, and the lease is another manager's: it stands until its deadline.
        store.recordLease(
            RefreshLease(
                owner: .init(processIdentifier: getpid(), instance: "suspended-extension"),
                startedAt: clock.now.timeIntervalSince1970,
                deadline: clock.now.timeIntervalSince1970 + 30,
                refreshTokenFingerprint: RefreshLease.fingerprint(of: refreshToken)
            )
        )
        let refresh = Task { try await widget.provider.refresh() }
        try await waitUntil(timeout: 300) { widget.provider.leaseWaiterCount == 1 }
        #expect(server.refreshCount == 0)
        // The waiter looks again every 2 s of the clock (a notice may have been missed), and
        // keeps waiting while the lease stands.
        for _ in 0..<14 {
            try await clock.waitForSleepers(1)
            clock.advance(by: 2)
            try await waitUntil(timeout: 300) { widget.provider.leaseWaiterCount == 1 || server.refreshCount > 0 }
        }
        #expect(server.refreshCount == 0, "28 s into a 30 s lease: still waiting")
        clock.advance(by: 3)
        _ = try await refresh.value
        #expect(server.refreshCount == 1, "the lapsed lease was taken over")
    }

    @Test(
        "a refresh abandons its exchange a little before its lease lapses: a timeout, the session stands, the lease is cleared"
    )
    func exchangeCutoff() async throws {
        let processes = try await TwoProcesses()
        let (app, server, store, clock) = (processes.app, processes.server, processes.store, processes.clock)
        let before = try #require(app.provider.session)
        server.holdsRefreshes = true
        let refresh = Task { try await app.provider.refresh() }
        try await server.waitForHeldRefreshes(1, timeout: 300)
        let lease = try #require(store.storedLease)
        #expect(lease.deadline - lease.startedAt == 120, "the default lease")
        // The cutoff sleeps on the clock until 5 s before the lease's deadline.
        clock.advance(by: 114)
        try await waitUntil(timeout: 300) { server.heldRefreshCount == 1 }
        #expect(store.storedLease == lease, "114 s in: still out")
        clock.advance(by: 2)
        // (A safety net before the await: without the cutoff the refresh would wait forever.)
        try await waitUntil(timeout: 300) { store.storedLease == nil && app.provider.waitingCallerCount == 0 }
        await #expect(throws: ManagedSessionError.remote(RemoteAuthError(.timedOut))) { try await refresh.value }
        await app.provider.waitUntilIdle()
        #expect(store.storedLease == nil, "cleared before the lease lapsed, so no process took it over")
        #expect(app.provider.session == before, "a timeout keeps the session")
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
    }

    @Test("a lease about another refresh token (a session since rotated or replaced) blocks nobody")
    func leaseOnAnotherTokenIsIgnored() async throws {
        let processes = try await TwoProcesses()
        let (widget, server, store, clock) = (processes.widget, processes.server, processes.store, processes.clock)
        store.recordLease(
            RefreshLease(
                owner: .init(processIdentifier: getpid(), instance: "other"),
                startedAt: clock.now.timeIntervalSince1970,
                deadline: clock.now.timeIntervalSince1970 + 120,
                refreshTokenFingerprint: RefreshLease.fingerprint(of: "a token nobody holds any more")
            )
        )
        _ = try await widget.provider.refresh()
        #expect(server.refreshCount == 1)
    }

    @Test("while a refresh is held at the server, every synchronous call returns at once (file store, real lock)")
    func synchronousCallsDuringHeldRefresh() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = FileSessionStore(directory: folder.url)
        let provider = ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        try await provider.signIn(with: .password(username: "alice", password: alicePassword))
        server.holdsRefreshes = true
        let refresh = Task { try await provider.refresh() }
        try await server.waitForHeldRefreshes(1, timeout: 300)

        let biometric = try timedOnAnotherThread { provider.setBioMetricAuthentication(true) }
        let session = try timedOnAnotherThread { _ = provider.session }
        let status = try timedOnAnotherThread { _ = handle.sessionStatus }
        let start = Date()
        _ = try await provider.validAccessToken()
        let token = Date().timeIntervalSince(start)
        #expect(server.heldRefreshCount == 1, "every call above returned while the refresh was out")
        #expect(provider.session?.isBiometricAuthenticationEnabled == true)
        #expect(try store.load()?.isBiometricAuthenticationEnabled == true, "written through the store")
        let signOut = try timedOnAnotherThread { try? provider.signout(with: nil) }
        #expect(server.heldRefreshCount == 1)
        let timings: [(String, TimeInterval)] = [
            ("setBioMetricAuthentication", biometric), ("session", session), ("status", status),
            ("validAccessToken", token), ("signout", signOut),
        ]
        print(
            "while a refresh was held at the server: "
                + timings.map { "\($0.0) \(String(format: "%.3f", $0.1 * 1000)) ms" }.joined(separator: ", ")
        )
        for (name, seconds) in timings {
            // The bound the issue sets is 50 ms; a loaded CI machine gets ten times that. The old
            // lock held across the network blocked until the release below, forever here.
            #expect(seconds < 0.5, "\(name) took \(seconds) s while a refresh was out")
        }
        server.releaseHeldRefreshes()
        await #expect(throws: ManagedSessionError.self) { try await refresh.value }
        await provider.waitUntilIdle()
        #expect(try store.load() == nil, "the sign-out stands; the refresh committed nothing")
        #expect(try store.loadLease() == nil, "the refresh cleared its lease")
        _ = handle
    }

    @Test(
        "the Keychain store with a coordination folder: an app and its extension share one refresh and hear each other's sign-out"
    )
    func keychainAcrossProcesses() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let keychain = FakeKeychain()
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        // Two store instances over one item and one folder: what the app and its extension have.
        func process() -> AuthSessionHandle<ManagedSessionProvider> {
            let store = KeychainSessionStore(
                service: "com.example.app",
                account: "session",
                accessGroup: "TEAM.com.example.shared",
                accessibility: .afterFirstUnlockThisDeviceOnly,
                accessControl: nil,
                coordinationDirectory: folder.url,
                items: keychain
            )
            let provider = ManagedSessionProvider(
                store: store,
                remote: server,
                retryPolicy: immediateRetries,
                clock: clock,
                configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
            )
            return AuthSessionHandle(
                sessionProvider: provider,
                biometricAuthenticator: MockBiometricAuthenticator(),
                activationSignal: ManualActivationSignal(),
                clock: clock
            )
        }
        let appHandle = process()
        let app = appHandle.sessionProvider
        try await app.signIn(with: .password(username: "alice", password: alicePassword))
        let extensionHandle = process()
        let extensionProcess = extensionHandle.sessionProvider
        try await waitUntil(timeout: 300) { extensionProcess.session != nil }

        server.holdsRefreshes = true
        let appRefresh = Task { try await app.refresh() }
        try await server.waitForHeldRefreshes(1, timeout: 300)
        let extensionRefresh = Task { try await extensionProcess.refresh() }
        try await waitUntil(timeout: 300) { extensionProcess.leaseWaiterCount == 1 }
        server.releaseHeldRefreshes()
        let rotated = try await appRefresh.value
        #expect(try await extensionRefresh.value.accessToken == rotated.accessToken)
        #expect(server.refreshCount == 1)
        #expect(server.duplicatePresentations.isEmpty)

        try app.signout(with: nil)
        try await waitUntil(timeout: 300) { extensionProcess.session == nil }
    }

    @Test(
        "a process suspended inside the store's exclusive access does not freeze the biometric toggle: it is stored when the access is released"
    )
    func biometricToggleWhileAnotherProcessHoldsTheLock() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let provider = ManagedSessionProvider(
            store: FileSessionStore(directory: folder.url),
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        try await provider.signIn(with: .password(username: "alice", password: alicePassword))
        // Another instance (another process, as far as flock is concerned) holds exclusive access.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let other = FileSessionStore(directory: folder.url)
        let holder = Thread {
            try? other.withExclusiveAccess {
                entered.signal()
                release.wait()
            }
        }
        holder.start()
        entered.wait()
        let elapsed = try timedOnAnotherThread { provider.setBioMetricAuthentication(true) }
        #expect(elapsed < 0.5, "returned while another process held the lock")
        #expect(provider.session?.isBiometricAuthenticationEnabled == false, "not stored yet, so not changed yet")
        release.signal()
        await provider.waitUntilIdle()
        #expect(provider.session?.isBiometricAuthenticationEnabled == true)
        #expect(try FileSessionStore(directory: folder.url).load()?.isBiometricAuthenticationEnabled == true)
    }

    // MARK: - Change notices

    @Test("a sign-out in one process signs the other out at once, with signedOutElsewhere")
    func signOutElsewhere() async throws {
        let processes = try await TwoProcesses()
        let (app, widget) = (processes.app, processes.widget)
        #expect(widget.provider.session != nil)
        try app.provider.signout(with: nil)
        // The handle hears the sign-out a moment after the session is gone (the notice's thread
        // publishes it): wait for the status itself.
        try await waitUntil(timeout: 300) {
            widget.provider.session == nil && widget.handle.sessionStatus == .signedOut
        }
        await widget.settle()
        let causes = widget.logouts.compactMap { event -> ManagedSessionError? in
            guard case .logout(let error) = event else { return nil }
            return error as? ManagedSessionError
        }
        #expect(causes == [.signedOutElsewhere], "\(widget.logouts)")
    }

    @Test(
        "a change no notice reported (a process suspended meanwhile, a store without notices) is found at the next activation"
    )
    func activationReadsTheStore() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let store = MockSessionStore()  // posts no notices
        let harness = ManagerHarness(store: store, server: server, clock: clock)
        let session = try await harness.signIn(alice)
        var rotated = session
        rotated.accessToken = "at-rotated-elsewhere-0123456789"
        store.replaceStoredSession(rotated)
        #expect(harness.provider.session?.accessToken == session.accessToken, "nothing told it yet")
        harness.activation.fire()
        await harness.settle()
        #expect(harness.provider.session?.accessToken == rotated.accessToken, "adopted at the activation")
        store.replaceStoredSession(nil)
        harness.activation.fire()
        await harness.settle()
        #expect(harness.provider.session == nil)
        #expect(harness.handle.sessionStatus == .signedOut)
    }

    @Test("a rotation in one process is adopted by the other without a request")
    func rotationAdopted() async throws {
        let processes = try await TwoProcesses()
        let (app, widget, server) = (processes.app, processes.widget, processes.server)
        let rotated = try await app.provider.refresh()
        try await waitUntil(timeout: 300) { widget.provider.session?.accessToken == rotated.accessToken }
        #expect(widget.provider.session?.refreshToken == rotated.refreshToken)
        #expect(server.refreshCount == 1)
        // The widget's next refresh presents the rotated token, not the spent one.
        _ = try await widget.provider.refresh()
        #expect(server.duplicatePresentations.isEmpty)
    }

    @Test(
        "the same person's new sign-in elsewhere is adopted; another person's signs this process out, and is left alone"
    )
    func signInElsewhere() async throws {
        let processes = try await TwoProcesses()
        let (app, widget, store) = (processes.app, processes.widget, processes.store)
        let again = try await app.signIn(alice)
        try await waitUntil(timeout: 300) { widget.provider.session?.accessToken == again.accessToken }
        let bobs = try await app.signIn(bob)
        try await waitUntil(timeout: 300) { widget.provider.session == nil }
        await widget.settle()
        #expect(store.storedSession?.accessToken == bobs.accessToken, "the widget removed nothing")
        #expect(!widget.recorder.events.contains { "\($0)".contains(bobs.accessToken) })
    }

    // MARK: - Identity without a subject

    @Test("a session from a server that names no user survives a relaunch (file store)")
    func noSubjectSurvivesRelaunch() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.namesUsers = false
        server.register(alice, password: alicePassword)
        func launch() -> ManagedSessionProvider {
            ManagedSessionProvider(
                store: FileSessionStore(directory: folder.url),
                remote: server,
                retryPolicy: immediateRetries,
                clock: clock,
                configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
            )
        }
        let first = launch()
        let signedIn = try await first.signIn(with: .password(username: "alice", password: alicePassword))
        #expect(signedIn.user.identifier.isEmpty)
        #expect(signedIn.lineage != nil)
        let relaunched = launch()
        let handle = AuthSessionHandle(
            sessionProvider: relaunched,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        #expect(relaunched.session?.accessToken == signedIn.accessToken, "restored, not refused as corrupt")
        #expect(handle.sessionStatus == .signedIn)
        let refreshed = try await relaunched.refresh()
        #expect(refreshed.lineage == signedIn.lineage, "a refresh keeps the lineage")
        #expect(try FileSessionStore(directory: folder.url).load()?.lineage == signedIn.lineage)
    }

    @Test(
        "two people through a server that names neither: the first process signs out, never holds the second's tokens, never writes over them"
    )
    func twoPeopleWithoutSubjects() async throws {
        let processes = try await TwoProcesses(signedIn: alice, namesUsers: false)
        let (app, widget, server, store) = (processes.app, processes.widget, processes.server, processes.store)
        // The widget refreshes with the server holding the answer; meanwhile another person signs
        // in through the app.
        server.holdsRefreshes = true
        let widgetRefresh = Task { try await widget.provider.refresh() }
        try await server.waitForHeldRefreshes(1, timeout: 300)
        let bobs = try await app.signIn(bob)
        #expect(bobs.user.identifier.isEmpty)
        try await waitUntil(timeout: 300) { widget.provider.session == nil }
        server.releaseHeldRefreshes()
        await #expect(throws: ManagedSessionError.self) { try await widgetRefresh.value }
        await widget.settle()
        #expect(store.storedSession?.accessToken == bobs.accessToken, "never written over")
        #expect(store.storedSession?.lineage == bobs.lineage)
        #expect(widget.provider.session == nil)
        #expect(!widget.recorder.events.contains { "\($0)".contains(bobs.accessToken) })
        #expect(!store.savedSessions.contains { $0.lineage != bobs.lineage && $0.issuedAt > bobs.issuedAt })
    }

    @Test("without a subject, a sign-in does not merge the last person's profile nor keep their biometric setting")
    func noSubjectNoMerge() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let harness = ManagerHarness(server: server, clock: clock)
        try await harness.signIn(alice)
        harness.provider.setBioMetricAuthentication(true)
        server.namesUsers = false
        let anonymous = try await harness.signIn(bob)
        #expect(anonymous.user.name == nil)
        #expect(anonymous.isBiometricAuthenticationEnabled == false)
    }

    // MARK: - Helpers

    /// The identifier of a process that has exited: its lease's owner is gone.
    private func exitedProcessIdentifier() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// Runs `body` on a thread of its own and returns how long it took; fails (instead of hanging)
    /// if it has not returned within 5 s.
    private func timedOnAnotherThread(_ body: @escaping @Sendable () -> Void) throws -> TimeInterval {
        let done = DispatchSemaphore(value: 0)
        let elapsed = ConcurrencySafeContainer<TimeInterval>(0)
        let thread = Thread {
            let start = Date()
            body()
            elapsed.withLock { $0 = Date().timeIntervalSince(start) }
            done.signal()
        }
        thread.start()
        guard done.wait(timeout: .now() + 5) == .success else {
            Issue.record("blocked for more than 5 s")
            throw CancellationError()
        }
        return elapsed.withLock { $0 }
    }
}
