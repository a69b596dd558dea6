import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

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

/// A prompt belongs to the session it was presented for: its outcome, late or early, never
/// decides for another session, and a failure the provider fails to act on still closes the gate.
@Suite("Biometric prompt lifetime")
struct HandlePromptLifetimeTests {

    @Test("a failed fetch before the launch fetch cannot let a refresh skip the prompt")
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

    @Test("a sign-out before the launch fetch cannot let a refresh skip the prompt")
    func signOutBeforeLaunchFetchKeepsGate() {
        let harness = Harness(expiresIn: 3600, biometric: true)
        harness.provider.publish(.sessionSignedOut(error: nil))
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        harness.provider.publish(.sessionFetched(isInitialFetch: false))

        #expect(harness.handle.sessionStatus == .biometricAuthentication)
    }

    @Test("a prompt's success that lands after a sign-out and a refresh does not sign the next session in")
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
