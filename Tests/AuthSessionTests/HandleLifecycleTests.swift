import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

@Suite("Initialization")
struct InitializationTests {

    @Test("a new handle is syncing, not ready, with no prompt and no manual authentication")
    func defaultState() {
        let harness = Harness()
        #expect(harness.handle.sessionStatus == .syncing)
        #expect(harness.handle.isBiometricAuthenticationInProcess == false)
        #expect(harness.handle.isManualAuthenticationRequired == false)
        #expect(harness.handle.state.withLock { $0.machine.isSessionReadyToValidate } == false)
    }

    @Test("the provider is initialized exactly once, with the handle's event proxy")
    func initializesProviderOnce() {
        let harness = Harness()
        #expect(harness.provider.initializeCount == 1)
        #expect(harness.provider.eventProxy === harness.handle.sessionEventProxy)
        #expect(harness.handle.sessionProvider === harness.provider)
    }

    @Test("session is the provider's session, read live")
    func sessionIsProvidersSession() {
        let harness = Harness(expiresIn: nil)
        #expect(harness.handle.session == nil)
        let session = harness.session(expiresIn: 600)
        harness.provider.session = session
        #expect(harness.handle.session == session)
    }

    @Test("the biometric flag mirrors the provider in both directions")
    func biometricFlagMirrorsProvider() {
        let harness = Harness()
        #expect(harness.handle.isBioMetricAuthenticationEnabled == false)
        harness.handle.setBioMetricAuthentication(true)
        #expect(harness.provider.isBioMetricAuthenticationEnabled)
        #expect(harness.handle.isBioMetricAuthenticationEnabled)
        harness.provider.isBioMetricAuthenticationEnabled = false
        #expect(harness.handle.isBioMetricAuthenticationEnabled == false)
    }

    @Test("the handle observes its activation signal")
    func observesActivation() {
        let harness = Harness()
        #expect(harness.activation.observerCount == 1)
    }

    @Test("init(sessionProvider:) wires the platform defaults and fails closed without biometric hardware")
    func defaultInitializerFailsClosed() async throws {
        let recorder = RecordingAuthSessionDelegate()
        let provider = MockSessionProvider(
            session: MockSession(expiresIn: 3600),
            isBioMetricAuthenticationEnabled: true
        )
        let handle = AuthSessionHandle(sessionProvider: provider)
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        provider.publish(.fetchingSession)
        provider.publish(.sessionFetched(isInitialFetch: true))
        #if canImport(LocalAuthentication)
        // A test host has no enrolled biometrics to pass: the gate holds either way.
        #expect(handle.sessionStatus != .signedIn)
        #else
        // The simulated prompt stays up 0.2 s of real time: a generous net for a loaded machine.
        try await recorder.waitForStatus(.signedOut, timeout: 300)
        #expect(provider.signOutErrors.first.flatMap { $0 as? BiometricAuthenticationError } == .biometryNotAvailable)
        #expect(handle.session == nil)
        #endif
    }
}

@Suite("Synchronous Init Emission")
struct SynchronousInitEmissionTests {

    private static let launch: [AuthSessionEvent] = [.fetchingSession, .sessionFetched(isInitialFetch: true)]

    @Test("a provider publishing from initializeSessionProvider reaches the biometric branch")
    func biometricBranchFires() async throws {
        let harness = Harness(biometric: true, eventsOnInitialize: Self.launch)
        #expect(harness.handle.sessionStatus == .biometricAuthentication)
        #expect(harness.handle.isBiometricAuthenticationInProcess)
        try await harness.authenticator.waitForPendingPrompt()
        #expect(harness.authenticator.reasons == ["Unlock your account"])
    }

    @Test("without biometrics the synchronous validation signs in")
    func validationRunsWithoutBiometrics() {
        let harness = Harness(eventsOnInitialize: Self.launch)
        #expect(harness.handle.sessionStatus == .signedIn)
    }

    @Test("an expired session is signed out during init, through the provider")
    func expiredSessionSignsOutDuringInit() async {
        let harness = Harness(expiresIn: 60, biometric: true, eventsOnInitialize: Self.launch)
        #expect(harness.provider.signOutCount == 1)
        #expect(harness.provider.signOutErrors.first.flatMap { $0 as? AuthSessionError }?.caseName == "sessionExpired")
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.authenticator.promptCount == 0)
    }

    @Test("a sign-out that throws during init still leaves the handle signed out")
    func throwingSignOutDuringInit() {
        let clock = ManualClock()
        let provider = MockSessionProvider(
            session: MockSession(expiresIn: 60, from: clock.now),
            eventsOnInitialize: Self.launch
        )
        provider.signOutBehavior = .throwing(URLError(.timedOut))
        let handle = mockHandle(provider, clock: clock)
        #expect(handle.sessionStatus == .signedOut)
        #expect(provider.signOutCount == 1)
        #expect(provider.session != nil, "the provider kept its session; the handle fails closed")
    }

    @Test("the proxy and readiness are in place after init returns")
    func referencesVisibleAfterInit() {
        let harness = Harness(eventsOnInitialize: Self.launch)
        #expect(harness.handle.sessionEventProxy != nil)
        #expect(harness.handle.state.withLock { $0.machine.isSessionReadyToValidate })
    }
}

@Suite("Deinit Cleanup")
struct DeinitCleanupTests {

    @Test("a handle deallocates when released, even if its provider keeps the proxy strongly")
    func handleDeallocates() {
        final class StrongProxyProvider: AuthSessionProviderProtocol {
            let proxy = ConcurrencySafeContainer<(any AuthSessionEventProxy)?>(nil)
            var session: MockSession? { nil }
            var isBioMetricAuthenticationEnabled: Bool { false }
            func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
                proxy.withLock { $0 = eventProxy }
            }
            func setBioMetricAuthentication(_ isEnabled: Bool) {}
            func signout(with error: (any Error)?) throws {}
            func preferredAuthenticationReason() -> String { "" }
            func canPerformAuthentication() -> Bool { false }
        }
        let provider = StrongProxyProvider()
        weak var weakHandle: AuthSessionHandle<StrongProxyProvider>?
        do {
            let handle = mockHandle(provider)
            weakHandle = handle
            #expect(weakHandle != nil)
        }
        #expect(weakHandle == nil)
        // Events after the handle is gone are dropped without a crash.
        provider.proxy.withLock { $0 }?.publish(.sessionSignIn)
    }

    @Test("deinit stops observing the activation signal")
    func deinitStopsObservingActivation() {
        let activation = ManualActivationSignal()
        let provider = MockSessionProvider()
        do {
            let handle = mockHandle(provider, activation: activation)
            #expect(activation.observerCount == 1)
            _ = handle
        }
        #expect(activation.observerCount == 0)
        activation.fire()
    }

    @Test("the provider's proxy is weak in the mock and stops publishing once the handle is gone")
    func proxyGoesAwayWithHandle() {
        let provider = MockSessionProvider()
        do {
            let handle = mockHandle(provider)
            #expect(provider.publish(.sessionSignIn))
            _ = handle
        }
        #expect(provider.eventProxy == nil)
        #expect(provider.publish(.sessionSignIn) == false)
    }

    @Test("deinit cancels the prompt on screen, and its outcome is dropped")
    func deinitCancelsPrompt() async throws {
        let authenticator = MockBiometricAuthenticator()
        let provider = MockSessionProvider(
            session: MockSession(expiresIn: 3600, from: ManualClock.defaultStart),
            isBioMetricAuthenticationEnabled: true
        )
        weak var weakHandle: AuthSessionHandle<MockSessionProvider>?
        do {
            let handle = mockHandle(provider, authenticator: authenticator)
            weakHandle = handle
            provider.publish(.sessionFetched(isInitialFetch: true))
            #expect(handle.sessionStatus == .biometricAuthentication)
            try await authenticator.waitForPendingPrompt()
        }
        #expect(weakHandle == nil)
        try await authenticator.waitForNoPendingPrompt()
        #expect(authenticator.resolvePendingPrompt(with: .failure(.failed)) == false)
        #expect(provider.signOutCount == 0)
    }
}

/// A delegate-event publisher that records what it receives, on a serial queue of its own.
final class RecordingPublisher: AuthSessionDelegateEventPublisher {
    let queue = DispatchQueue(label: "RecordingPublisher")
    private let received = ConcurrencySafeContainer<[(event: String, hadHandle: Bool)]>([])

    func publish(_ event: AuthSessionDelegateEvent, for sessionHandle: (any AuthSessionHandleProtocol)?) {
        received.withLock { $0.append((event.description, sessionHandle != nil)) }
    }

    func events() async -> [String] {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
        return received.withLock { $0.map(\.event) }
    }

    var allHadHandle: Bool {
        received.withLock { $0.allSatisfy(\.hadHandle) }
    }
}
