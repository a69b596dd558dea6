import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

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

@Suite("Races and lifetimes found in review")
struct ReviewRegressionTests {

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

    @Test("a delegate that unsubscribes in its first callback gets none of the step's other callbacks")
    func unsubscribeMidStep() async {
        final class OneShotDelegate: AuthSessionDelegate {
            let handle: AuthSessionHandle<MockSessionProvider>
            let received = ConcurrencySafeContainer<[String]>([])
            init(handle: AuthSessionHandle<MockSessionProvider>) {
                self.handle = handle
            }
            func authentication(
                _ sessionHandle: (any AuthSessionHandleProtocol)?,
                didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
                from oldStatus: any AuthSessionStatusProtocol,
                for session: (any AuthSessionProtocol)?
            ) {
                received.withLock { $0.append("status") }
                handle.unsubscribeDelegate(self)
            }
            func authentication(
                _ sessionHandle: (any AuthSessionHandleProtocol)?,
                didCompleteFetchWith session: (any AuthSessionProtocol)?,
                isInitialFetch: Bool
            ) {
                received.withLock { $0.append("fetch") }
            }
        }
        let harness = Harness()
        let delegate = OneShotDelegate(handle: harness.handle)
        let queue = DispatchQueue(label: "one-shot")
        harness.handle.subscribeDelegate(delegate, receive: queue)
        harness.launch()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(delegate.received.withLock { $0 } == ["status"])
        #expect(await harness.events().count == 3, "other subscribers still get all three")
    }

    @Test("a biometric failure the provider fails to sign out on cannot be skipped by the next refresh")
    func gateHoldsAfterFailedSignOut() async throws {
        let harness = Harness(biometric: true)
        harness.provider.signOutBehavior = .throwing(URLError(.timedOut))
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .failure(.failed))
        await harness.handle.waitForBiometricPrompt()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.session != nil)
        harness.provider.publish(.sessionFetchFailed(URLError(.notConnectedToInternet)))
        #expect(harness.handle.sessionStatus == .biometricAuthentication)
        try await harness.authenticator.waitForPromptCount(2)
    }

    @Test("a prompt abandoned by a sign-out does not leave a later refresh stuck in syncing")
    func abandonedPromptDoesNotStick() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        harness.provider.publish(.sessionSignedOut(error: nil))
        harness.provider.isBioMetricAuthenticationEnabled = false
        harness.provider.session = harness.session(expiresIn: 3600)
        harness.provider.publish(.fetchingSession)
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(harness.handle.sessionStatus == .signedIn)
        harness.authenticator.resolvePendingPrompt(with: .failure(.failed))
        await harness.handle.waitForBiometricPrompt()
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.provider.signOutCount == 0)
    }

    @Test("a prompt success re-checks the session: one that expired while the prompt was up signs out")
    func successReChecksExpiry() async throws {
        let harness = Harness(expiresIn: 600, biometric: true)
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        harness.clock.advance(by: 500)
        harness.authenticator.resolvePendingPrompt(with: .success)
        await harness.handle.waitForBiometricPrompt()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutErrors.first.flatMap { $0 as? AuthSessionError }?.caseName == "sessionExpired")
    }
}

@Suite("Races and lifetimes found in the second review")
struct SecondReviewRegressionTests {

    @Test("a new delegate at a released delegate's address replaces the stale entry instead of being mistaken for it")
    func reusedAddressSubscribes() {
        let queue = DispatchQueue(label: "reused-address")
        let newcomer = RecordingAuthSessionDelegate()
        let id = Subscription.ID(object: ObjectIdentifier(newcomer), kind: .delegate)
        var registry = SubscriberRegistry()
        do {
            // The entry a released delegate left at the address the newcomer now occupies.
            let released = RecordingAuthSessionDelegate()
            registry.subscribe(Subscription(delegate: released, id: id), of: released, queue: queue)
        }
        #expect(registry.entries.count == 1)
        #expect(registry.entries[0].subscription.isAlive == false)

        let subscription = Subscription(delegate: newcomer)
        registry.subscribe(subscription, of: newcomer, queue: queue)
        #expect(registry.entries.count == 1)
        #expect(registry.entries[0].subscription === subscription)
        #expect(registry.entries[0].subscription.refers(to: newcomer))

        // Subscribing the same live delegate again keeps its subscription.
        registry.subscribe(Subscription(delegate: newcomer), of: newcomer, queue: queue)
        #expect(registry.entries[0].subscription === subscription)
    }
}

/// A provider whose prompt reason, asked for just before the prompt is shown, first signs the
/// user out: the deterministic form of "the session moved on before the prompt appeared".
private final class SignOutBeforePromptProvider: AuthSessionProviderProtocol {
    private let proxy = ConcurrencySafeContainer<(any AuthSessionEventProxy)?>(nil)
    let session: MockSession? = MockSession(expiresIn: 3600, from: ManualClock.defaultStart)
    var isBioMetricAuthenticationEnabled: Bool { true }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        proxy.withLock { $0 = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) {
        proxy.withLock { $0 }?.publish(event)
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {}
    func preferredAuthenticationReason() -> String {
        publish(.sessionSignedOut(error: nil))
        return "Unlock"
    }
    func canPerformAuthentication() -> Bool { true }
}

extension SecondReviewRegressionTests {

    @Test("a prompt the session outlived before it appeared is never shown")
    func stalePromptIsNotShown() async {
        let provider = SignOutBeforePromptProvider()
        let authenticator = MockBiometricAuthenticator()
        let handle = mockHandle(provider, authenticator: authenticator)
        provider.publish(.sessionFetched(isInitialFetch: true))
        await handle.waitForBiometricPrompt()
        #expect(handle.sessionStatus == .signedOut)
        #expect(!handle.isBiometricAuthenticationInProcess)
        #expect(authenticator.promptCount == 0)
    }
}

extension ConcurrencyLoad {

    @Suite("Deinit unsubscribing under load")
    struct DeinitUnsubscribeLoadTests {

        @Test("a delegate whose deinit unsubscribes itself never deadlocks the handle")
        func delegateDeinitUnsubscribes() async {
            final class SelfUnsubscribingDelegate: AuthSessionDelegate {
                let handle: AuthSessionHandle<MockSessionProvider>
                init(handle: AuthSessionHandle<MockSessionProvider>) {
                    self.handle = handle
                }
                deinit {
                    handle.unsubscribeDelegate(self)
                }
            }
            let harness = Harness(subscribe: false)
            let queue = DispatchQueue(label: "deinit-unsubscribes")
            let finished = await onParallelThreads(8, timeout: 60) { thread in
                for step in 0..<10_000 {
                    let delegate = SelfUnsubscribingDelegate(handle: harness.handle)
                    harness.handle.subscribeDelegate(delegate, receive: queue)
                    if step.isMultiple(of: 50) {
                        harness.provider.publish(
                            thread.isMultiple(of: 2) ? .sessionSignIn : .sessionSignedOut(error: nil)
                        )
                    }
                }
            }
            guard finished else {
                Issue.record("the handle deadlocked")
                return
            }
            #expect(harness.handle.subscriberCount == 0)
        }
    }
}
