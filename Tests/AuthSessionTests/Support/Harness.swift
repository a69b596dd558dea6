import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

/// A handle wired to the test kit: a scripted provider, a hand-resolved biometric prompt, a
/// hand-fired activation signal, a manual clock and a recording delegate.
struct Harness {
    let clock: ManualClock
    let provider: MockSessionProvider
    let authenticator: MockBiometricAuthenticator
    let activation: ManualActivationSignal
    let recorder: RecordingAuthSessionDelegate
    let handle: AuthSessionHandle<MockSessionProvider>

    /// - Parameters:
    ///   - expiresIn: Seconds left on the provider's session; `nil` for no session.
    ///   - biometric: Whether biometrics are on (`canPerformAuthentication()`).
    ///   - subscribe: Whether the recorder subscribes before anything happens.
    ///   - hasApplicationLifecycle: Whether the activation signal stands for an app lifecycle.
    ///   - prompt: The handle's authenticator, instead of ``authenticator``.
    init(
        expiresIn: TimeInterval? = 3600,
        biometric: Bool = false,
        localValidation: Bool = true,
        autoRefresh: Bool = false,
        eventsOnInitialize: [AuthSessionEvent] = [],
        subscribe: Bool = true,
        hasApplicationLifecycle: Bool = true,
        authenticator prompt: (any BiometricAuthenticator)? = nil
    ) {
        let clock = ManualClock()
        self.clock = clock
        provider = MockSessionProvider(
            session: expiresIn.map { MockSession(expiresIn: $0, from: clock.now) },
            isBioMetricAuthenticationEnabled: biometric,
            allowsLocalSessionValidation: localValidation,
            isSessionAutoRefreshEnabled: autoRefresh,
            eventsOnInitialize: eventsOnInitialize
        )
        authenticator = MockBiometricAuthenticator()
        activation = ManualActivationSignal(hasApplicationLifecycle: hasApplicationLifecycle)
        recorder = RecordingAuthSessionDelegate()
        handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: prompt ?? authenticator,
            activationSignal: activation,
            clock: clock
        )
        if subscribe {
            handle.subscribeDelegate(recorder, receive: recorder.queue)
        }
    }

    /// The launch: `fetchingSession`, then `sessionFetched(isInitialFetch: true)`.
    func launch() {
        provider.publish(.fetchingSession)
        provider.publish(.sessionFetched(isInitialFetch: true))
    }

    /// A session expiring `seconds` from the clock's now.
    func session(expiresIn seconds: TimeInterval) -> MockSession {
        MockSession(expiresIn: seconds, from: clock.now)
    }

    /// The callbacks received so far, once the recorder's queue has run what was enqueued.
    func events() async -> [String] {
        await recorder.drain()
        return recorder.events.map(\.description)
    }

    /// The status changes received so far, as `from → to`.
    func statusChanges() async -> [String] {
        await recorder.drain()
        return recorder.statusChanges.map(\.description)
    }
}

/// A handle on `provider` with the test kit's seams and no outside input.
func mockHandle<Provider: AuthSessionProviderProtocol>(
    _ provider: Provider,
    authenticator: any BiometricAuthenticator = MockBiometricAuthenticator(),
    activation: any AppActivationSignal = ManualActivationSignal(),
    clock: any AuthSessionClock = ManualClock()
) -> AuthSessionHandle<Provider> {
    AuthSessionHandle(
        sessionProvider: provider,
        biometricAuthenticator: authenticator,
        activationSignal: activation,
        clock: clock
    )
}

/// Waits until `condition` holds, yielding between looks; fails after `timeout` seconds (a safety
/// net: the condition is what the test waits on).
func waitUntil(
    timeout: TimeInterval = 300,
    _ condition: @Sendable () -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("the condition did not hold within \(timeout) s", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        await Task.yield()
    }
}
