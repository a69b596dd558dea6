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

/// A store that forwards to another and can pause its next save after the caller's compare (a
/// process inside its commit, in the middle of a slow `fsync`), or hide the change notifier (a
/// process that has not heard a notice yet: suspended, or just late).
private final class PausingStore: SessionStore, @unchecked Sendable {
    // @unchecked: `inner` is thread-safe, and `gate` is a lock-protected container.
    let inner: any SessionStore
    let hidesNotifier: Bool
    private let gate = ConcurrencySafeContainer<(entered: DispatchSemaphore, release: DispatchSemaphore)?>(nil)

    init(_ inner: any SessionStore, hidesNotifier: Bool = false) {
        self.inner = inner
        self.hidesNotifier = hidesNotifier
    }

    /// The next save signals `entered`, then waits for `release`.
    func pauseNextSave() -> (entered: DispatchSemaphore, release: DispatchSemaphore) {
        let pair = (entered: DispatchSemaphore(value: 0), release: DispatchSemaphore(value: 0))
        gate.withLock { $0 = pair }
        return pair
    }

    func load() throws(SessionStoreError) -> ManagedSession? { try inner.load() }
    func save(_ session: ManagedSession) throws(SessionStoreError) {
        if let pair = gate.withLock({ gate in
            defer { gate = nil }
            return gate
        }) {
            pair.entered.signal()
            pair.release.wait()
        }
        try inner.save(session)
    }
    func remove() throws(SessionStoreError) { try inner.remove() }
    func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R { try inner.withExclusiveAccess(body) }
    func withExclusiveAccessIfAvailable<R>(_ body: () throws -> R) throws -> R? {
        try inner.withExclusiveAccessIfAvailable(body)
    }
    func loadLease() throws(SessionStoreError) -> RefreshLease? { try inner.loadLease() }
    func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) { try inner.saveLease(lease) }
    var changeNotifier: (any SessionChangeNotifier)? { hidesNotifier ? nil : inner.changeNotifier }
}

/// A manager and its handle on `store`: one process.
private struct Process {
    let provider: ManagedSessionProvider
    let handle: AuthSessionHandle<ManagedSessionProvider>
    let activation = ManualActivationSignal()

    init(store: any SessionStore, server: InProcessAuthorizationServer, clock: ManualClock) {
        provider = ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: activation)
        )
        handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
    }

    func signIn(_ user: ManagedUser) async throws -> ManagedSession {
        try await provider.signIn(with: .password(username: user.identifier, password: password(of: user)))
    }
}

private func server(_ clock: ManualClock, namesUsers: Bool = true) -> InProcessAuthorizationServer {
    let server = InProcessAuthorizationServer(clock: clock)
    server.namesUsers = namesUsers
    server.register(alice, password: alicePassword)
    server.register(bob, password: bobPassword)
    return server
}

/// Waits on a semaphore on a thread of its own, not one of Swift's pool; fails after 300 s (a
/// safety net: under ThreadSanitizer, with the whole suite on 2 cores, a refresh can take seconds).
private func wait(for semaphore: DispatchSemaphore) async throws {
    let signalled = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let thread = Thread { continuation.resume(returning: semaphore.wait(timeout: .now() + 300) == .success) }
        thread.start()
    }
    guard signalled else {
        Issue.record("not signalled within 300 s")
        throw CancellationError()
    }
}

/// Has `store`'s exclusive access taken on a thread of its own (another process, as far as `flock`
/// is concerned, suspended inside it) until the returned semaphore is signalled.
private func holdExclusiveAccess(of store: FileSessionStore) async throws -> DispatchSemaphore {
    let held = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let holder = Thread {
        _ = try? store.withExclusiveAccess {
            held.signal()
            release.wait()
        }
    }
    holder.start()
    try await wait(for: held)
    return release
}

@Suite("Processes sharing a store: sign-ins, sign-outs and settings racing another process's commit", .serialized)
struct SharedStoreRaceTests {

    @Test("a sign-out while another process's refresh commits stands: the commit never writes the session back")
    func signOutDuringAnotherCommit() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = server(clock)
        let app = Process(store: FileSessionStore(directory: folder.url), server: server, clock: clock)
        _ = try await app.signIn(alice)
        let widgetStore = PausingStore(FileSessionStore(directory: folder.url))
        let widget = Process(store: widgetStore, server: server, clock: clock)
        #expect(widget.provider.session != nil)

        let gate = widgetStore.pauseNextSave()
        let refresh = Task { try await widget.provider.refresh() }
        try await wait(for: gate.entered)  // the widget compared the store, and saves now
        try app.provider.signout(with: nil)
        #expect(app.provider.session == nil, "the app is signed out at once")
        gate.release.signal()
        _ = try? await refresh.value
        await app.provider.waitUntilIdle()
        await widget.provider.waitUntilIdle()
        try await waitUntil(timeout: 300) { widget.provider.session == nil }
        #expect(try FileSessionStore(directory: folder.url).load() == nil, "the sign-out stands in the store")
    }

    @Test("another person's sign-in while a process's refresh commits is never written over")
    func signInDuringAnotherCommit() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = server(clock)
        let app = Process(store: FileSessionStore(directory: folder.url), server: server, clock: clock)
        _ = try await app.signIn(alice)
        let widgetStore = PausingStore(FileSessionStore(directory: folder.url))
        let widget = Process(store: widgetStore, server: server, clock: clock)

        let gate = widgetStore.pauseNextSave()
        let refresh = Task { try await widget.provider.refresh() }
        try await wait(for: gate.entered)
        let signIn = Task { try await app.signIn(bob) }
        gate.release.signal()
        let bobs = try await signIn.value
        _ = try? await refresh.value
        await widget.provider.waitUntilIdle()
        try await waitUntil(timeout: 300) { widget.provider.session == nil }
        #expect(try FileSessionStore(directory: folder.url).load()?.accessToken == bobs.accessToken)
        #expect(app.provider.session?.accessToken == bobs.accessToken, "the app keeps bob signed in")
    }

    @Test(
        "without a subject, a process that has not heard another person's sign-in neither takes it over with a biometric toggle nor removes it with a sign-out"
    )
    func noSubjectLateNotice() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = server(clock, namesUsers: false)
        let app = Process(store: FileSessionStore(directory: folder.url), server: server, clock: clock)
        let alices = try await app.signIn(alice)
        let widget = Process(
            store: PausingStore(FileSessionStore(directory: folder.url), hidesNotifier: true),
            server: server,
            clock: clock
        )
        #expect(widget.provider.session?.lineage == alices.lineage)
        let bobs = try await app.signIn(bob)
        widget.provider.setBioMetricAuthentication(true)
        await widget.provider.waitUntilIdle()
        #expect(widget.provider.session?.accessToken != bobs.accessToken, "never holds the other person's tokens")
        var stored = try FileSessionStore(directory: folder.url).load()
        #expect(stored?.accessToken == bobs.accessToken)
        #expect(stored?.isBiometricAuthenticationEnabled == false, "the setting is not written on their session")
        try? widget.provider.signout(with: nil)
        await widget.provider.waitUntilIdle()
        stored = try FileSessionStore(directory: folder.url).load()
        #expect(stored?.accessToken == bobs.accessToken, "the other person's session is left alone")
    }

    @Test("a sign-out whose removal failed never removes, later, a newer sign-in made elsewhere")
    func pendingRemovalSparesNewerSignIn() async throws {
        let clock = ManualClock()
        let server = server(clock)
        let store = MockSessionStore(postsChangeNotices: true)
        let app = Process(store: store, server: server, clock: clock)
        _ = try await app.signIn(alice)
        let widget = Process(store: store, server: server, clock: clock)
        #expect(widget.provider.session != nil)
        store.failsWrites = true
        #expect(throws: ManagedSessionError.self) { try widget.provider.signout(with: nil) }
        store.failsWrites = false
        let again = try await app.signIn(alice)
        await app.provider.waitUntilIdle()
        widget.activation.fire()  // the widget becomes active, and tries its removal again
        await widget.provider.waitUntilIdle()
        await app.provider.waitUntilIdle()
        #expect(store.storedSession?.accessToken == again.accessToken, "the newer sign-in stays in the store")
        #expect(app.provider.session?.accessToken == again.accessToken, "the app stays signed in")
    }

    @Test(
        "biometric toggles made while another process holds the store's access are stored in order: the last one wins"
    )
    func biometricTogglesKeepTheirOrder() async throws {
        for _ in 0..<10 {
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let clock = ManualClock()
            let server = server(clock)
            let app = Process(store: FileSessionStore(directory: folder.url), server: server, clock: clock)
            _ = try await app.signIn(alice)
            let widget = Process(store: FileSessionStore(directory: folder.url), server: server, clock: clock)
            let other = FileSessionStore(directory: folder.url)
            let release = try await holdExclusiveAccess(of: other)
            let values = [true, false, true, false, true, false, true]
            for value in values { widget.provider.setBioMetricAuthentication(value) }
            release.signal()
            await widget.provider.waitUntilIdle()
            #expect(try FileSessionStore(directory: folder.url).load()?.isBiometricAuthenticationEnabled == values.last)
            #expect(widget.provider.isBioMetricAuthenticationEnabled == values.last)
        }
    }

    @Test(
        "a biometric setting queued behind another process's access applies to the session it was asked for, never to the next person's"
    )
    func queuedBiometricSettingStaysWithItsSession() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = server(clock)
        let app = Process(store: FileSessionStore(directory: folder.url), server: server, clock: clock)
        _ = try await app.signIn(alice)
        let other = FileSessionStore(directory: folder.url)
        let release = try await holdExclusiveAccess(of: other)
        app.provider.setBioMetricAuthentication(true)  // queued: the access is held
        try app.provider.signout(with: nil)  // at once; its removal waits for the access too
        #expect(app.provider.session == nil)
        let signIn = Task { try await app.signIn(bob) }  // waits for the access on its own thread
        release.signal()
        let bobs = try await signIn.value
        await app.provider.waitUntilIdle()
        let stored = try FileSessionStore(directory: folder.url).load()
        #expect(stored?.accessToken == bobs.accessToken, "bob's sign-in is stored, not removed by alice's sign-out")
        #expect(stored?.isBiometricAuthenticationEnabled == false, "alice's setting is not bob's")
        #expect(app.provider.session?.isBiometricAuthenticationEnabled == false)
    }

    #if os(Linux)
    @Test(
        "a store whose folder does not exist yet, observed while the notice thread sleeps, is heard once the folder appears"
    )
    func missingFolderIsWatchedWhenItAppears() async throws {
        let existing = try TemporaryFolder()
        defer { existing.remove() }
        let first = InotifyChangeNotifier(directory: existing.url.path, names: ["session.json"]).observe {}
        defer { first.cancel() }
        let parent = try TemporaryFolder()
        defer { parent.remove() }
        let missing = parent.url.appendingPathComponent("later", isDirectory: true)
        let heard = ConcurrencySafeContainer(false)
        let second = InotifyChangeNotifier(directory: missing.path, names: ["session.json"]).observe {
            heard.withLock { $0 = true }
        }
        defer { second.cancel() }
        try FileSessionStore(directory: missing).save(sampleSession(1))
        try await waitUntil(timeout: 300) { heard.withLock { $0 } }
    }
    #endif
}
