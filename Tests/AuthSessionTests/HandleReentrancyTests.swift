import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// Waits for `handle` to be idle, or `timeout` seconds, a safety net that turns a handle that
/// never goes idle into a failure instead of a hung test run.
///
/// - Returns: `false` if the handle was not idle in time.
private func waitUntilIdle<Provider>(
    _ handle: AuthSessionHandle<Provider>,
    timeout: TimeInterval = 300
) async -> Bool {
    let outcome = ConcurrencySafeContainer<CheckedContinuation<Bool, Never>?>(nil)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        outcome.withLock { $0 = continuation }
        Task {
            await handle.waitUntilIdle()
            outcome.withLock { $0.take() }?.resume(returning: true)
        }
        Thread {
            Thread.sleep(forTimeInterval: timeout)
            outcome.withLock { $0.take() }?.resume(returning: false)
        }
        .start()
    }
}

/// A provider whose `session` getter publishes `sessionUpdated`, with the session it returns,
/// every time it is read. Counts those publishes.
private final class PublishingGetterProvider: AuthSessionProviderProtocol {
    private struct State {
        weak var proxy: (any AuthSessionEventProxy)?
        var session: MockSession?
        var publishCount = 0
    }
    private let state: ConcurrencySafeContainer<State>

    init(session: MockSession?) {
        state = ConcurrencySafeContainer(State(session: session))
    }

    /// How many events the getter has published so far.
    var publishCount: Int { state.withLock { $0.publishCount } }

    var session: MockSession? {
        let (session, proxy) = state.withLock { state in
            state.publishCount += 1
            return (state.session, state.proxy)
        }
        proxy?.publish(.sessionUpdated(session))
        return session
    }

    /// Publishes `event` as the provider's own code would, outside any getter.
    func publish(_ event: AuthSessionEvent) { state.withLock { $0.proxy }?.publish(event) }

    var isBioMetricAuthenticationEnabled: Bool { false }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {
        state.withLock { $0.session = nil }
        publish(.sessionSignedOut(error: error))
    }
    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

/// Providers that call back into the handle from inside the handle's own calls to them.
@Suite("Handle re-entrancy")
struct HandleReentrancyTests {

    @Test("a session getter that publishes on every read: the handle goes idle after a bounded number of steps")
    func publishingSessionGetterGoesIdle() async {
        let clock = ManualClock()
        let provider = PublishingGetterProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let recorder = RecordingAuthSessionDelegate()
        let handle = mockHandle(provider, clock: clock)
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        provider.publish(.fetchingSession)
        provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(await waitUntilIdle(handle), "the handle never went idle")
        // Each read publishes once; the event published from inside an input's read is applied
        // after that input, and the one published from inside the read made for that event is
        // dropped, with one fresh read after it (a reconcile; what its read publishes, a session
        // update, is dropped with no further step). Subscribing reads the session (1), and what
        // that publishes is applied with its echo and the reconcile (2 to 4); then each of the
        // two launch events, its echo and a reconcile (5 to 10).
        #expect(provider.publishCount == 10)
        #expect(handle.sessionStatus == .signedIn)
        await recorder.drain()
        #expect(
            recorder.events.map(\.description) == [
                "userUpdate", "statusChanged(syncing → validating)", "statusChanged(validating → signedIn)",
                "sessionFetch(initial)", "userUpdate",
            ]
        )
        // Idle for good: nothing more arrives on its own.
        await handle.waitUntilIdle()
        #expect(provider.publishCount == 10)
        // Later inputs cost the same bounded work, and the handle is idle again after each.
        let before = provider.publishCount
        for _ in 0..<10 {
            provider.publish(.sessionFetched(isInitialFetch: false))
        }
        #expect(await waitUntilIdle(handle), "the handle never went idle")
        #expect(provider.publishCount - before == 30)
        await recorder.drain()
        #expect(isChain(recorder.statusChanges, from: .syncing))
        withExtendedLifetime(handle) {}
    }

    @Test("a publish from inside a provider call is applied right after the step that made the call")
    func reentrantPublishIsAppliedNext() {
        let provider = ReentrantProvider()
        let handle = mockHandle(provider)
        provider.handle.withLock { $0 = handle }
        provider.publish(.sessionSignedOut(error: nil))
        provider.arm()
        provider.publish(.sessionUpdated(nil))  // its read of the session publishes a sign-in
        #expect(provider.statusAfterPublish == .signedOut, "queued: this thread is applying an input")
        #expect(handle.sessionStatus == .signedIn, "applied before the outer publish returned")
    }

    @Test("a sign-out published during a refresh's read is applied after it: never signed in without a session")
    func staleSnapshotIsReRead() {
        let clock = ManualClock()
        let provider = InterleavingProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let handle = mockHandle(provider, clock: clock)
        provider.publish(.sessionFetched(isInitialFetch: true))
        provider.publish(.fetchingSession)
        #expect(handle.sessionStatus == .syncing)
        // While the refresh reads the session, a sign-out clears it and is handled first.
        provider.interleaveOnNextRead(.sessionSignedOut(error: nil))
        provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(provider.session == nil)
        #expect(handle.sessionStatus == .signedOut)
    }

    @Test("a user getter that reads the handle does not deadlock it while a model observes")
    func userGetterReadingHandleDoesNotDeadlock() async {
        let provider = HandleReadingProvider()
        let handle = mockHandle(provider)
        provider.handle.withLock { $0 = handle }
        // What an `ObservableAuthSession` registers, done off the main thread so that a deadlock
        // fails the test instead of hanging the runner.
        let finished = await onParallelThreads(1, timeout: 20) { _ in
            let updates = handle.observationUpdates()
            provider.publish(.sessionSignIn)
            provider.publish(.sessionUpdated(provider.session))
            withExtendedLifetime(updates) {}
        }
        #expect(finished, "the handle deadlocked")
    }
}

/// A provider whose `session` getter, when armed, publishes a sign-in (re-entrantly: the
/// handle is applying an input on this very thread) and records the status right after.
private final class ReentrantProvider: AuthSessionProviderProtocol {
    private struct State {
        weak var proxy: (any AuthSessionEventProxy)?
        var isArmed = false
        var statusAfterPublish: AuthSessionStatus?
    }
    private let state = ConcurrencySafeContainer(State())
    let handle = ConcurrencySafeContainer<AuthSessionHandle<ReentrantProvider>?>(nil)

    func arm() { state.withLock { $0.isArmed = true } }
    var statusAfterPublish: AuthSessionStatus? { state.withLock { $0.statusAfterPublish } }

    var session: MockSession? {
        let (armed, proxy) = state.withLock { state in
            defer { state.isArmed = false }
            return (state.isArmed, state.proxy)
        }
        if armed {
            proxy?.publish(.sessionSignIn)
            let status = handle.withLock { $0 }?.sessionStatus
            state.withLock { $0.statusAfterPublish = status }
        }
        return MockSession(expiresIn: 3600)
    }
    var isBioMetricAuthenticationEnabled: Bool { false }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) { state.withLock { $0.proxy }?.publish(event) }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {}
    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

/// A provider whose `session` getter, when armed, runs a whole other input on the handle first:
/// the deterministic form of "another thread changed the world between an input's read and its
/// step".
private final class InterleavingProvider: AuthSessionProviderProtocol {
    private struct State {
        var session: MockSession?
        weak var proxy: (any AuthSessionEventProxy)?
        var interleaved: AuthSessionEvent?
    }
    private let state: ConcurrencySafeContainer<State>

    init(session: MockSession?) {
        state = ConcurrencySafeContainer(State(session: session))
    }

    /// The next read of `session` returns the current session, but first clears it and publishes
    /// `event`, as a concurrent sign-out would.
    func interleaveOnNextRead(_ event: AuthSessionEvent) {
        state.withLock { $0.interleaved = event }
    }

    var session: MockSession? {
        let (session, interleaved, proxy) = state.withLock { state in
            defer { state.interleaved = nil }
            let session = state.session
            if state.interleaved != nil {
                state.session = nil
            }
            return (session, state.interleaved, state.proxy)
        }
        if let interleaved {
            proxy?.publish(interleaved)
        }
        return session
    }

    var isBioMetricAuthenticationEnabled: Bool { false }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) {
        state.withLock { $0.proxy }?.publish(event)
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {}
    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

/// A provider whose user getter reads the handle's status, as a computed property might.
private final class HandleReadingProvider: AuthSessionProviderProtocol {
    struct ReadingUser: AuthSessionUserProtocol {
        let identifier: String
        static func == (lhs: Self, rhs: Self) -> Bool { lhs.identifier == rhs.identifier }
        func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
    }

    struct ReadingSession: AuthSessionProtocol {
        let accessToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl"
        let expiresAt = Date().timeIntervalSince1970 + 3600
        let handle: ConcurrencySafeContainer<AuthSessionHandle<HandleReadingProvider>?>

        var user: ReadingUser {
            // Computed on every read; asks the handle, as an app's model might.
            let status = handle.withLock { $0 }?.sessionStatus
            return ReadingUser(identifier: "ada-\(status.map { "\($0)" } ?? "none")")
        }
    }

    let handle = ConcurrencySafeContainer<AuthSessionHandle<HandleReadingProvider>?>(nil)
    private let proxy = ConcurrencySafeContainer<(any AuthSessionEventProxy)?>(nil)

    var session: ReadingSession? { ReadingSession(handle: handle) }
    var isBioMetricAuthenticationEnabled: Bool { false }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        proxy.withLock { $0 = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) {
        proxy.withLock { $0 }?.publish(event)
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {}
    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

extension ConcurrencyLoad {

    @Suite("Fresh reads under racing inputs")
    struct FreshReadLoadTests {

        @Test("with slow provider reads and racing inputs, a refresh never ends signed in without a session")
        func slowReadsNeverDecideFromStaleState() async {
            let trials = 300
            var inconsistent = 0
            let threads = ParallelThreads(3)
            defer { threads.stop() }
            for _ in 0..<trials {
                let clock = ManualClock()
                let provider = HoldingProvider(session: MockSession(expiresIn: 3600, from: clock.now))
                let activation = ManualActivationSignal()
                let handle = mockHandle(provider, activation: activation, clock: clock)
                provider.publish(.sessionFetched(isInitialFetch: true))
                activation.fire()  // arms revalidation: later activations validate
                provider.slowDownPolicyReads(by: 0.001)
                let refreshed = ConcurrencySafeContainer(false)
                let readsBefore = provider.policyReads
                // Signalled when the refresh is inside its read number `signOutAt`, or has returned.
                let signOutAt = readsBefore + Int.random(in: 1...8)
                let signOutNow = DispatchSemaphore(value: 0)
                provider.onPolicyRead { reads in
                    if reads == signOutAt {
                        signOutNow.signal()
                    }
                }
                await threads.run { thread in
                    switch thread {
                    case 0:
                        provider.publish(.fetchingSession)
                        provider.publish(.sessionFetched(isInitialFetch: false))
                        refreshed.withLock { $0 = true }
                        signOutNow.signal()
                    case 1:
                        // Lands inside one of the refresh's reads of the world, chosen at random.
                        signOutNow.wait()
                        try? provider.signout(with: nil)
                    default:
                        // Other inputs keep arriving while the refresh reads (none of them re-decides).
                        for _ in 0..<10_000 where !refreshed.withLock({ $0 }) {
                            provider.publish(.sessionUpdated(nil))
                        }
                    }
                }
                await handle.waitUntilIdle()
                if provider.session == nil && handle.sessionStatus != .signedOut {
                    inconsistent += 1
                }
            }
            #expect(
                inconsistent == 0,
                "\(inconsistent) of \(trials) trials ended signed in, or loading, with no session"
            )
        }
    }
}
