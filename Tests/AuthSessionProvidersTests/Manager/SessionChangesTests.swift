import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// Reads one subscriber's changes in a task of its own and records them.
final class ChangeRecorder: Sendable {
    private let recorded = ConcurrencySafeContainer<[ManagedSessionChanges.Element]>([])
    private let ended = ConcurrencySafeContainer(false)
    private let reader: Task<Void, Never>
    /// The hub's identifier of this subscriber.
    let subscriptionID: UInt64

    /// Subscribes now (the iterator is made here, on the caller's thread), then reads in a task;
    /// `onChange` runs in that task after each element is recorded.
    init(
        _ provider: ManagedSessionProvider,
        delay: (@Sendable () async -> Void)? = nil,
        onChange: (@Sendable (ManagedSessionChanges.Element) async -> Void)? = nil
    ) {
        let iterator = provider.sessionChanges.makeAsyncIterator()
        subscriptionID = iterator.subscription.id
        let recorded = recorded
        let ended = ended
        reader = Task {
            var iterator = iterator
            while let change = await iterator.next() {
                recorded.withLock { $0.append(change) }
                await onChange?(change)
                await delay?()
            }
            ended.withLock { $0 = true }
        }
    }

    var changes: [ManagedSessionChanges.Element] { recorded.withLock { $0 } }

    /// `event description | user` per change, for readable comparisons.
    var summary: [String] { changes.map(Self.summary) }

    static func summary(_ change: ManagedSessionChanges.Element) -> String {
        "\(change.event) | \(change.session?.user.identifier ?? "none")"
    }

    func waitForCount(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await waitUntil(timeout: 300, { self.changes.count >= count }, sourceLocation: sourceLocation)
    }

    func cancel() { reader.cancel() }

    /// Waits for the reader to end (cancelled, or the manager released); fails after 60 s.
    func finished(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await waitUntil(timeout: 300, { self.ended.withLock { $0 } }, sourceLocation: sourceLocation)
    }
}

/// A manager without a handle yet, so a test can subscribe before the launch.
private func makeProvider(
    store: MockSessionStore,
    server: InProcessAuthorizationServer,
    clock: ManualClock,
    activation: ManualActivationSignal = ManualActivationSignal(),
    revocation: Notification.Name? = nil
) -> ManagedSessionProvider {
    server.register(alice, password: alicePassword)
    server.register(bob, password: bobPassword)
    return ManagedSessionProvider(
        store: store,
        remote: server,
        retryPolicy: immediateRetries,
        clock: clock,
        configuration: .init(
            checksCredentialState: false,
            activationSignal: activation,
            revocationSignal: revocation.map { NotificationCenterCredentialRevocationSignal(name: $0) }
        )
    )
}

private func makeHandle(
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

@Suite("The session stream: (event, session) from the current session on, in commit order")
struct SessionChangesTests {

    @Test("a stored session is the first element: never a signed-out first element, even before the launch")
    func storedSessionFirst() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let provider = makeProvider(store: MockSessionStore(session: stored), server: server, clock: clock)
        let early = ChangeRecorder(provider)  // before the launch
        let handle = makeHandle(provider, clock: clock)
        let late = ChangeRecorder(provider)  // after it
        try await early.waitForCount(1)
        try await late.waitForCount(1)
        #expect(early.summary == ["initialSession | alice"])
        #expect(late.summary == ["initialSession | alice"])
        #expect(early.changes.first?.session == stored)
        _ = handle
    }

    @Test("a due stored session: the first element waits for the launch refresh and carries the new tokens")
    func dueSessionFirstAfterRefresh() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        clock.advance(by: 3600 - 30)
        server.holdsRefreshes = true
        let provider = makeProvider(store: MockSessionStore(session: stored), server: server, clock: clock)
        let recorder = ChangeRecorder(provider)
        let handle = makeHandle(provider, clock: clock)
        try await server.waitForHeldRefreshes(1)
        let during = ChangeRecorder(provider)
        await Task.yield()
        #expect(recorder.changes.isEmpty, "nothing before the launch ends: no signed-out flash")
        #expect(during.changes.isEmpty)
        server.releaseHeldRefreshes()
        try await recorder.waitForCount(1)
        try await during.waitForCount(1)
        for changes in [recorder.changes, during.changes] {
            #expect(changes.first?.event.isInitial == true)
            #expect(changes.first?.session?.accessToken != nil)
            #expect(changes.first?.session?.accessToken != stored.accessToken, "the refreshed session, not the due one")
        }
        _ = handle
    }

    @Test("a locked store at launch: no first element until it opens; then the stored session")
    func lockedStoreWaits() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let store = MockSessionStore(session: stored)
        store.isUnavailable = true
        let provider = makeProvider(store: store, server: server, clock: clock)
        let recorder = ChangeRecorder(provider)
        let handle = makeHandle(provider, clock: clock)
        await provider.waitUntilIdle()
        #expect(recorder.changes.isEmpty, "a locked store is not a sign-out")
        store.isUnavailable = false
        provider.reloadStore()
        try await recorder.waitForCount(1)
        #expect(recorder.summary == ["initialSession | alice"])
        _ = handle
    }

    @Test("a sign-in while the launch refreshes a stored session: the first element is signed in, then signedIn")
    func signInDuringTheLaunchRefresh() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        clock.advance(by: 4000)  // due: the launch refreshes it before the first element
        server.holdsRefreshes = true
        let harness = ManagerHarness(stored: stored, server: server, clock: clock)
        try await server.waitForHeldRefreshes(1, timeout: 300)
        #expect(harness.provider.session != nil, "the launch found the stored session")
        let recorder = ChangeRecorder(harness.provider)  // joined before the launch finished
        let signedIn = try await harness.signIn()
        try await recorder.waitForCount(2)
        #expect(recorder.summary == ["initialSession | alice", "signedIn | alice"])
        #expect(recorder.changes.map(\.session) == [signedIn, signedIn], "never a signed-out first element")
        server.releaseHeldRefreshes()
        await harness.settle()
        #expect(recorder.changes.count == 2, "the superseded launch refresh changes nothing")
        let late = ChangeRecorder(harness.provider)
        try await late.waitForCount(1)
        #expect(late.changes.map(\.session) == [signedIn])
    }

    @Test("a sign-out while the launch refreshes a stored session: a subscriber that joined before sees nobody")
    func signOutDuringTheLaunchRefresh() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        clock.advance(by: 4000)
        server.holdsRefreshes = true
        let harness = ManagerHarness(stored: stored, server: server, clock: clock)
        try await server.waitForHeldRefreshes(1, timeout: 300)
        let recorder = ChangeRecorder(harness.provider)  // joined before the launch finished
        try harness.provider.signout(with: nil)
        server.releaseHeldRefreshes()
        await harness.settle()
        try await recorder.waitForCount(1)
        // It never saw the stored session, so nothing ended for it: the first element is nobody.
        #expect(recorder.summary == ["initialSession | none"])
        let late = ChangeRecorder(harness.provider)
        try await late.waitForCount(1)
        #expect(late.summary == ["initialSession | none"])
    }

    @Test("sign-in, refresh, user update and sign-out, each with its session; then a new subscriber starts from now")
    func lifecycle() async throws {
        let harness = ManagerHarness()
        let recorder = ChangeRecorder(harness.provider)
        try await recorder.waitForCount(1)
        let signedIn = try await harness.signIn()
        try await recorder.waitForCount(2)
        let refreshed = try await harness.provider.refresh()
        try await recorder.waitForCount(3)
        harness.provider.setBioMetricAuthentication(true)
        try await recorder.waitForCount(4)
        let late = ChangeRecorder(harness.provider)
        try harness.provider.signout(with: nil)
        try await recorder.waitForCount(5)
        try await late.waitForCount(2)
        #expect(
            recorder.summary == [
                "initialSession | none", "signedIn | alice", "tokenRefreshed | alice", "userUpdated | alice",
                "signedOut(voluntary) | none",
            ]
        )
        #expect(recorder.changes[1].session == signedIn)
        #expect(recorder.changes[2].session == refreshed)
        #expect(recorder.changes[3].session?.isBiometricAuthenticationEnabled == true)
        #expect(late.summary == ["initialSession | alice", "signedOut(voluntary) | none"])
        // A sign-out with nobody signed in changes nothing.
        try harness.provider.signout(with: nil)
        await harness.settle()
        #expect(recorder.changes.count == 5)
    }

    @Test("the causes of a sign-out: the server refusing the refresh token, a revoked credential, the app's reason")
    func signOutCauses() async throws {
        let harness = ManagerHarness()
        let recorder = ChangeRecorder(harness.provider)
        try await harness.signIn()
        harness.server.revokeAllSessions(of: alice.identifier)
        _ = try? await harness.provider.refresh()
        try await recorder.waitForCount(3)
        try await harness.signIn()
        NotificationCenter.default.post(name: harness.revocationName, object: nil)
        try await recorder.waitForCount(5)
        try await harness.signIn()
        try harness.provider.signout(with: BiometricAuthenticationError.biometryLockedout)
        try await recorder.waitForCount(7)
        let causes = recorder.changes.compactMap { change -> SignOutCause? in
            if case .signedOut(let cause) = change.event { return cause }
            return nil
        }
        try #require(causes.count == 3)
        guard case .endedByServer(let error) = causes[0] else {
            Issue.record("not ended by the server: \(causes[0])")
            return
        }
        #expect(error.serverCode == "invalid_grant")
        #expect(error.problem == .sessionEnded, "a refused refresh token reads as an ended session")
        guard case .credentialRevoked(.revoked) = causes[1] else {
            Issue.record("not a revoked credential: \(causes[1])")
            return
        }
        guard case .requested(let reason) = causes[2] else {
            Issue.record("not the app's reason: \(causes[2])")
            return
        }
        #expect(reason.error as? BiometricAuthenticationError == .biometryLockedout)
    }

    @Test("changes committed while an earlier one is being published keep their own sessions, in order")
    func changesCommittedDuringPublishing() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let provider = makeProvider(store: MockSessionStore(), server: server, clock: clock)
        // A handle's proxy that calls back into the manager while it hears the sign-in: the
        // setting and the sign-out commit before the manager publishes either.
        let proxy = CallingBackProxy { event in
            if case .sessionSignIn = event {
                provider.setBioMetricAuthentication(true)
                try? provider.signout(with: nil)
            }
        }
        provider.initializeSessionProvider(for: proxy)
        let recorder = ChangeRecorder(provider)
        try await provider.signIn(with: .password(username: "alice", password: alicePassword))
        try await recorder.waitForCount(4)
        #expect(
            recorder.summary == [
                "initialSession | none", "signedIn | alice", "userUpdated | alice", "signedOut(voluntary) | none",
            ]
        )
        #expect(recorder.changes[2].session?.isBiometricAuthenticationEnabled == true)
    }

    @Test("a cancelled subscriber ends and leaves; the others go on")
    func cancelledSubscriber() async throws {
        let harness = ManagerHarness()
        let leaving = ChangeRecorder(harness.provider)
        let staying = ChangeRecorder(harness.provider)
        try await leaving.waitForCount(1)
        #expect(harness.provider.instrumentation.changes.subscriberCount == 2)
        leaving.cancel()
        try await leaving.finished()
        #expect(harness.provider.instrumentation.changes.subscriberCount == 1, "a cancelled subscriber is removed")
        try await harness.signIn()
        try await staying.waitForCount(2)
        #expect(leaving.changes.count == 1)
        #expect(staying.summary == ["initialSession | none", "signedIn | alice"])
    }

    @Test("a subscriber that calls the manager from its loop: no deadlock, and it sees its own change next")
    func reentrantSubscriber() async throws {
        let harness = ManagerHarness()
        let provider = harness.provider
        let recorder = ChangeRecorder(
            provider,
            onChange: { change in
                if case .signedIn = change.event {
                    // Signs out from inside the loop, synchronously.
                    try? provider.signout(with: nil)
                }
            }
        )
        try await harness.signIn()
        try await recorder.waitForCount(3)
        #expect(recorder.summary == ["initialSession | none", "signedIn | alice", "signedOut(voluntary) | none"])
    }

    @Test("a slow subscriber loses nothing and slows nobody: its changes wait in its buffer, in order")
    func slowSubscriber() async throws {
        let harness = ManagerHarness()
        let gate = AsyncGate()
        let slow = ChangeRecorder(harness.provider, delay: { await gate.wait() })
        let fast = ChangeRecorder(harness.provider)
        try await slow.waitForCount(1)
        try await harness.signIn()
        for _ in 0..<20 {
            try await harness.provider.refresh()
        }
        try await fast.waitForCount(22)
        #expect(slow.changes.count == 1, "the slow one is still at its first element")
        gate.open()
        try await slow.waitForCount(22)
        #expect(slow.summary == fast.summary)
        #expect(slow.changes.map(\.session) == fast.changes.map(\.session))
    }

    @Test("the manager released: every subscriber's loop ends")
    func managerReleased() async throws {
        var harness: ManagerHarness? = ManagerHarness()
        let recorder = ChangeRecorder(harness!.provider)
        try await recorder.waitForCount(1)
        await harness?.settle()
        harness = nil
        try await recorder.finished()
        #expect(recorder.changes.count == 1)
    }

    @Test(
        "randomized: many subscribers, concurrent sign-ins, refreshes and sign-outs; each sees the commit order",
        arguments: [1, 2, 3, 4, 5]
    )
    func randomizedConcurrency(seed: UInt64) async throws {
        let harness = ManagerHarness()
        let provider = harness.provider
        provider.instrumentation.changes.startLog()
        let early = (0..<8).map { _ in ChangeRecorder(provider) }
        try await early[0].waitForCount(1)
        let operations = 120
        let late = ConcurrencySafeContainer<[(recorder: ChangeRecorder, skipped: Int)]>([])
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var generator = SeededGenerator(seed: seed &* 31 &+ UInt64(worker))
                    for step in 0..<(operations / 4) {
                        switch Int.random(in: 0..<6, using: &generator) {
                        case 0, 1: _ = try? await harness.signIn(Bool.random(using: &generator) ? alice : bob)
                        case 2, 3: _ = try? await provider.refresh()
                        case 4: try? provider.signout(with: nil)
                        default: provider.setBioMetricAuthentication(Bool.random(using: &generator))
                        }
                        if worker == 0, step % 3 == 0 {
                            // A subscriber joining mid-run: its elements are the log from its join.
                            let recorder = ChangeRecorder(provider)
                            let start = provider.instrumentation.changes.logPosition(of: recorder.subscriptionID)
                            late.withLock { $0.append((recorder, start ?? -1)) }
                        }
                    }
                }
            }
        }
        await harness.settle()
        let log = provider.instrumentation.changes.log
        #expect(log.count > 5)
        // The log is a history that makes sense: a change of a session follows a sign-in.
        var current: ManagedSession? = nil
        for (index, change) in log.enumerated() {
            switch change.event {
            case .initialSession:
                Issue.record("an initial element at \(index), after the launch")
            case .signedIn:
                #expect(change.session != nil)
            case .tokenRefreshed, .userUpdated:
                #expect(current != nil && change.session?.user.identifier == current?.user.identifier)
            case .signedOut:
                #expect(current != nil && change.session == nil)
            }
            current = change.session
        }
        #expect(current == provider.session, "the last element is the manager's session")
        let expected = log.map(ChangeRecorder.summary)
        for recorder in early {
            // Subscribed after the launch, before any operation: nobody signed in, then the log.
            try await recorder.waitForCount(1 + log.count)
            #expect(recorder.summary == ["initialSession | none"] + expected)
            #expect(Array(recorder.changes.dropFirst().map(\.session)) == log.map(\.session))
        }
        for (recorder, start) in late.withLock({ $0 }) {
            // Joined after `start` changes: the session then, and the log from there.
            try #require(start >= 0)
            try await recorder.waitForCount(1 + log.count - start)
            let initial = start == 0 ? nil : log[start - 1].session
            #expect(recorder.summary.first == "initialSession | \(initial?.user.identifier ?? "none")")
            #expect(recorder.changes.first?.session == initial)
            #expect(Array(recorder.summary.dropFirst()) == Array(expected[start...]))
            #expect(Array(recorder.changes.dropFirst().map(\.session)) == Array(log[start...].map(\.session)))
        }
    }
}

/// An event proxy that hands each event to `body` on the publishing thread.
final class CallingBackProxy: AuthSessionEventProxy {
    private let body: @Sendable (AuthSessionEvent) -> Void

    init(eventListening: @escaping @Sendable (AuthSessionEvent) -> Void) {
        body = eventListening
    }

    func publish(_ event: AuthSessionEvent, for sessionProvider: (any AuthSessionProviderProtocol)?) {
        body(event)
    }
}

/// A gate tasks wait at until it opens.
final class AsyncGate: Sendable {
    private let state = ConcurrencySafeContainer<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>(
        (false, [])
    )

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A deterministic generator (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
