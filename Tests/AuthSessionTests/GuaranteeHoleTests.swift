import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Observation
import Testing

@testable import AuthSession

/// A provider whose reads can be slowed down or held, to put another input between a step's read
/// of the world and the step itself, the way a second thread would.
private final class HoldingProvider: AuthSessionProviderProtocol {
    private struct State {
        var session: MockSession?
        var isBiometricEnabled: Bool
        weak var proxy: (any AuthSessionEventProxy)?
        /// Called, then waited on, by the next read of `session`.
        var holdNextSessionRead: (entered: @Sendable () -> Void, release: DispatchSemaphore)?
        var readDelay: TimeInterval = 0
        var policyReads = 0
        var onPolicyRead: (@Sendable (Int) -> Void)?
    }
    private let state: ConcurrencySafeContainer<State>

    init(session: MockSession?, biometric: Bool = false) {
        state = ConcurrencySafeContainer(State(session: session, isBiometricEnabled: biometric))
    }

    /// The next read of `session` calls `entered`, then blocks until `release` is signalled.
    func holdNextSessionRead(entered: @escaping @Sendable () -> Void, release: DispatchSemaphore) {
        state.withLock { $0.holdNextSessionRead = (entered, release) }
    }

    /// Every `canPerformAuthentication()` takes this long, as `LAContext.canEvaluatePolicy` does.
    func slowDownPolicyReads(by seconds: TimeInterval) {
        state.withLock { $0.readDelay = seconds }
    }

    /// Calls `observer` with the count each time `canPerformAuthentication()` is entered.
    func onPolicyRead(_ observer: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.onPolicyRead = observer }
    }

    /// How many times `canPerformAuthentication()` has been entered.
    var policyReads: Int { state.withLock { $0.policyReads } }

    func setSession(_ session: MockSession?) {
        state.withLock { $0.session = session }
    }

    var session: MockSession? {
        let (session, hold) = state.withLock { state in
            defer { state.holdNextSessionRead = nil }
            return (state.session, state.holdNextSessionRead)
        }
        if let hold {
            hold.entered()
            hold.release.wait()
        }
        return session
    }

    var isBioMetricAuthenticationEnabled: Bool { state.withLock { $0.isBiometricEnabled } }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) {
        state.withLock { $0.proxy }?.publish(event)
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {
        state.withLock { $0.isBiometricEnabled = isEnabled }
    }
    func signout(with error: (any Error)?) throws {
        let proxy = state.withLock { state in
            state.session = nil
            return state.proxy
        }
        proxy?.publish(.sessionSignedOut(error: error))
    }
    func preferredAuthenticationReason() -> String { "Unlock" }
    func canPerformAuthentication() -> Bool {
        let (delay, enabled, reads, observer) = state.withLock { state in
            state.policyReads += 1
            return (state.readDelay, state.isBiometricEnabled, state.policyReads, state.onPolicyRead)
        }
        observer?(reads)
        if delay > 0 {
            Thread.sleep(forTimeInterval: delay)
        }
        return enabled
    }
}

@Suite("Guarantee holes found by the adversarial review (issue 8)")
struct GuaranteeHoleTests {

    // MARK: 1. Biometric bypass

    @Test("1. a failed fetch before the launch fetch cannot let a refresh skip the prompt")
    func failedFetchBeforeLaunchFetchKeepsGate() {
        let harness = Harness(expiresIn: nil, biometric: true)
        harness.provider.publish(.fetchingSession)
        harness.provider.publish(.sessionFetchFailed(URLError(.notConnectedToInternet)))
        #expect(harness.handle.sessionStatus == .signedOut)

        harness.provider.session = harness.session(expiresIn: 3600)
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        harness.provider.publish(.sessionFetched(isInitialFetch: false))

        #expect(harness.handle.sessionStatus == .biometricAuthentication)
        #expect(harness.handle.isBiometricAuthenticationInProcess)
    }

    @Test("1. a sign-out before the launch fetch cannot let a refresh skip the prompt")
    func signOutBeforeLaunchFetchKeepsGate() {
        let harness = Harness(expiresIn: 3600, biometric: true)
        harness.provider.publish(.sessionSignedOut(error: nil))
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        harness.provider.publish(.sessionFetched(isInitialFetch: false))

        #expect(harness.handle.sessionStatus == .biometricAuthentication)
    }

    // MARK: 2. Late success unlocks the next session

    @Test("2. a prompt's success that lands after a sign-out and a refresh does not sign the next session in")
    func lateSuccessDoesNotUnlockNextSession() async throws {
        let clock = ManualClock()
        let provider = HoldingProvider(session: MockSession(expiresIn: 3600, from: clock.now), biometric: true)
        let authenticator = MockBiometricAuthenticator()
        let handle = mockHandle(provider, authenticator: authenticator, clock: clock)
        provider.publish(.sessionFetched(isInitialFetch: true))
        try await authenticator.waitForPendingPrompt()
        #expect(handle.sessionStatus == .biometricAuthentication)

        // The user passes the prompt; the outcome's step is held at its read of the session while
        // the provider signs out and a refresh arrives.
        let release = DispatchSemaphore(value: 0)
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        provider.holdNextSessionRead(entered: { enteredContinuation.yield() }, release: release)
        authenticator.resolvePendingPrompt(with: .success)
        for await _ in entered { break }

        provider.publish(.sessionSignedOut(error: nil))
        provider.setSession(MockSession(expiresIn: 3600, from: clock.now, user: MockUser(identifier: "next")))
        provider.publish(.sessionFetched(isInitialFetch: false))
        release.signal()

        // The next session needs a prompt of its own.
        try await authenticator.waitForPromptCount(2)
        #expect(handle.sessionStatus == .biometricAuthentication)
        try await authenticator.resolveNextPrompt(with: .failure(.canceledByUser))
        await handle.waitForBiometricPrompt()
        #expect(handle.sessionStatus == .signedOut)
    }

    // MARK: 3. Stale read: see RaceTests (run with the other loads, one at a time)

    // MARK: 4. Provider code under the lock

    @Test("4. a user getter that reads the handle does not deadlock it while a model observes")
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

    // MARK: 5. ObservableAuthSession.user goes stale

    @Test(
        "5. a sign-in during any read the model's creation makes still reaches the model",
        arguments: 0...2
    )
    @MainActor
    func modelSeesSignInDuringRegistration(readsBeforeSignIn: Int) async {
        let clock = ManualClock()
        let provider = SignInOnReadProvider(clock: clock)
        let handle = mockHandle(provider, clock: clock)
        provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(handle.sessionStatus == .signedOut)

        provider.signInOnRead(after: readsBeforeSignIn)
        let model = ObservableAuthSession(handle: handle)
        // No further input: the model must agree with the handle on its own.
        let converged = await until(model, timeout: 10) { model in
            model.status == handle.sessionStatus && model.user?.identifier == handle.session?.user.identifier
        }
        #expect(converged, "model: \(model.status), user \(String(describing: model.user?.identifier))")
    }

    @Test("5. a sessionUpdated racing another event leaves the model on the provider's user")
    @MainActor
    func modelConvergesUnderRacingUpdates() async {
        let clock = ManualClock()
        let provider = HoldingProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let handle = mockHandle(provider, clock: clock)
        provider.publish(.sessionSignIn)
        let model = ObservableAuthSession(handle: handle)
        let renamed = MockSession(expiresIn: 3600, from: clock.now, user: MockUser(identifier: "renamed"))

        // An event's read of the session is held; meanwhile the provider renames the user.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        provider.holdNextSessionRead(entered: { entered.signal() }, release: release)
        await onParallelThreads(2) { thread in
            if thread == 0 {
                provider.publish(.unexpectedError(.sessionMalformed))
            } else {
                entered.wait()
                provider.setSession(renamed)
                provider.publish(.sessionUpdated(renamed))
                release.signal()
            }
        }
        let converged = await until(model, timeout: 10) { $0.user?.identifier == "renamed" && $0.lastError != nil }
        #expect(converged, "model user: \(String(describing: model.user?.identifier))")
    }

    // MARK: 6. Unsubscribe does not stop the private listener

    @Test("6. after unsubscribeEventPublisher returns, the private listener's closure is not called")
    @MainActor
    func privateListenerStopsAtUnsubscribe() async {
        let harness = Harness(subscribe: false)
        let log = ConcurrencySafeContainer<[String]>([])
        let listener = SessionDelegateEventProxy { event in
            log.withLock { $0.append("\(event)") }
        }
        harness.handle.subscribeEventPublisher(listener)
        harness.provider.publish(.sessionSignIn)
        // Runs on the main queue after the handle's delivery and before anything that delivery
        // enqueues itself.
        DispatchQueue.main.async {
            harness.handle.unsubscribeEventPublisher(listener)
            log.withLock { $0.append("unsubscribed") }
        }
        await drainMainQueue(times: 3)
        let entries = log.withLock { $0 }
        let afterUnsubscribe = entries.drop { $0 != "unsubscribed" }.dropFirst()
        #expect(afterUnsubscribe.isEmpty, "called after unsubscribing: \(Array(afterUnsubscribe))")
    }

    // MARK: 7. A delegate called after unsubscribeDelegate returned: see RaceTests

    // MARK: 11. NaN expiry

    @Test("11. a session whose expiry is not a number, or infinite, is expired")
    func nonFiniteExpiryIsExpired() {
        for expiresAt in [TimeInterval.nan, .infinity, -.infinity, .signalingNaN] {
            let session = MockSession(expiresAt: expiresAt)
            #expect(session.isSessionExpired(at: Date()), "expiresAt \(expiresAt)")
            #expect(session.expiresIn(at: Date()) == 0, "expiresAt \(expiresAt)")
        }
        let harness = Harness()
        harness.provider.session = MockSession(expiresAt: .nan)
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutCount == 1)
    }
}

// MARK: - Helpers

/// A delegate that counts the callbacks that start after its `unsubscribed` flag was set, or are
/// still running when it is set.
private final class FlagCheckingDelegate: AuthSessionDelegate {
    let unsubscribed = ConcurrencySafeContainer(false)
    let violations: ConcurrencySafeContainer<Int>

    init(violations: ConcurrencySafeContainer<Int>) {
        self.violations = violations
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        check()
    }

    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {
        check()
    }

    private func check() {
        if unsubscribed.withLock({ $0 }) {
            violations.withLock { $0 += 1 }
            return
        }
        // A callback that takes a moment, as real ones do: an unsubscribe meanwhile must wait.
        for _ in 0..<200 {
            if unsubscribed.withLock({ $0 }) {
                violations.withLock { $0 += 1 }
                return
            }
        }
    }
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

/// A provider with no session that, when armed, signs a user in from inside a read of its
/// session: the read returns what it saw before, the sign-in is published right after.
private final class SignInOnReadProvider: AuthSessionProviderProtocol {
    private struct State {
        var session: MockSession?
        var readsBeforeSignIn: Int?
        weak var proxy: (any AuthSessionEventProxy)?
    }
    private let state = ConcurrencySafeContainer(State())
    private let clock: ManualClock

    init(clock: ManualClock) {
        self.clock = clock
    }

    /// After `reads` more reads of `session`, the next one signs a user in.
    func signInOnRead(after reads: Int) {
        state.withLock { $0.readsBeforeSignIn = reads }
    }

    var session: MockSession? {
        let now = clock.now
        let (session, proxy) = state.withLock { state -> (MockSession?, (any AuthSessionEventProxy)?) in
            let seen = state.session
            guard let reads = state.readsBeforeSignIn else { return (seen, nil) }
            if reads > 0 {
                state.readsBeforeSignIn = reads - 1
                return (seen, nil)
            }
            state.readsBeforeSignIn = nil
            state.session = MockSession(expiresIn: 3600, from: now, user: MockUser(identifier: "ada"))
            return (seen, state.proxy)
        }
        proxy?.publish(.sessionSignIn)
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

/// Lets everything already on the main queue run, `times` rounds (each round also runs what the
/// previous one enqueued).
@MainActor
func drainMainQueue(times: Int) async {
    for _ in 0..<times {
        await withCheckedContinuation { continuation in
            DispatchQueue.main.async { continuation.resume() }
        }
    }
}

/// Waits until `condition` holds for the model, re-checking after each change Observation
/// reports; records an issue and returns `false` if it still does not hold after `timeout`
/// seconds (a safety net).
@MainActor
@discardableResult
func until(
    _ model: ObservableAuthSession,
    timeout: TimeInterval = 10,
    _ condition: @escaping @MainActor (ObservableAuthSession) -> Bool
) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition(model) {
        guard Date() < deadline else {
            Issue.record("the model did not reach the condition within \(timeout) s")
            return false
        }
        let (changed, continuation) = AsyncStream<Void>.makeStream()
        withObservationTracking {
            _ = (model.status, model.user?.identifier, model.lastError, model.isManualAuthenticationRequired)
        } onChange: {
            continuation.yield()
            continuation.finish()
        }
        let timer = Task {
            try? await Task.sleep(nanoseconds: UInt64(max(deadline.timeIntervalSinceNow, 0) * 1_000_000_000))
            continuation.finish()
        }
        for await _ in changed {}
        timer.cancel()
    }
    return true
}

@Suite("Subscribing scales linearly (issue 8, item 10)")
struct SubscriptionScalingTests {

    private final class SilentDelegate: AuthSessionDelegate {}

    @Test("10. subscribing and unsubscribing n delegates looks at O(n) entries in all, not O(n²)")
    func subscribingIsLinear() {
        let harness = Harness(subscribe: false)
        let count = 4_000
        let delegates = (0..<count).map { _ in SilentDelegate() }
        for delegate in delegates {
            harness.handle.subscribeDelegate(delegate, receive: .global())
        }
        for delegate in delegates {
            harness.handle.subscribeDelegate(delegate, receive: .global())  // again: moves, keeps one
        }
        #expect(harness.handle.subscriberCount == count)
        for delegate in delegates {
            harness.handle.unsubscribeDelegate(delegate)
        }
        #expect(harness.handle.subscriberCount == 0)
        let probes = harness.handle.state.withLock { $0.subscribers.probeCount }
        #expect(probes <= 16 * count, "\(probes) entries probed for \(count) delegates")
    }
}

extension ConcurrencyLoad {

    /// The review's races, repeated until they fail reliably on the engine that had them. They
    /// load every core, so they run one at a time with the other loads.
    @Suite("Races from the review (issue 8)")
    struct RaceTests {

        @Test("3. with slow provider reads and racing inputs, a refresh never ends signed in without a session")
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

        @Test("7. once unsubscribeDelegate returns on another thread, the delegate is never called again")
        func unsubscribeExcludesDelivery() async {
            let trials = 3_000
            let violations = ConcurrencySafeContainer(0)
            let harness = Harness(subscribe: false)
            let queue = DispatchQueue(label: "unsubscribe-exclusion")
            let threads = ParallelThreads(2)
            defer { threads.stop() }
            for _ in 0..<trials {
                let delegate = FlagCheckingDelegate(violations: violations)
                harness.handle.subscribeDelegate(delegate, receive: queue)
                await threads.run { thread in
                    if thread == 0 {
                        harness.provider.publish(.sessionSignIn)
                        harness.provider.publish(.sessionSignedOut(error: nil))
                    } else {
                        harness.handle.unsubscribeDelegate(delegate)
                        delegate.unsubscribed.withLock { $0 = true }
                    }
                }
            }
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            let count = violations.withLock { $0 }
            #expect(count == 0, "a delegate ran after unsubscribeDelegate returned in \(count) callbacks")
        }
    }
}
