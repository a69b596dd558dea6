import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

@Suite("Biometric Failure Handling")
struct BiometricFailureHandlingTests {

    @Test(
        "by default every failure signs out: signed out at once, the provider asked with the biometric error",
        arguments: BiometricAuthenticationError.allCases
    )
    func defaultPolicySignsOut(error: BiometricAuthenticationError) async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .failure(error))
        try await harness.recorder.waitForEvents(count: 5)
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutErrors.count == 1)
        #expect(harness.provider.signOutErrors.first.flatMap { $0 as? BiometricAuthenticationError } == error)
        #expect(harness.handle.isManualAuthenticationRequired == false)
        #expect(
            await harness.events() == [
                "statusChanged(syncing → validating)", "statusChanged(validating → biometricAuthentication)",
                "sessionFetch(initial)",
                "statusChanged(biometricAuthentication → signedOut)", "logout(BiometricAuthenticationError.\(error))",
            ]
        )
    }

    @Test("a failure the provider keeps the session on: signed in, manual authentication required, failure reported")
    func keptSession() async throws {
        let harness = Harness(biometric: true)
        harness.provider.biometricErrorsThatKeepSession = [.canceledByUser]
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .failure(.canceledByUser))
        try await harness.recorder.waitForEvents(count: 5)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.handle.isManualAuthenticationRequired)
        #expect(harness.provider.signOutCount == 0)
        guard case .failure(.biometricAuthFailure(let cause)) = harness.recorder.events.last else {
            Issue.record("expected a biometricAuthFailure, got \(harness.recorder.events)")
            return
        }
        #expect(cause as? BiometricAuthenticationError == .canceledByUser)
    }

    @Test("the policy is asked per error: kept for one kind, signed out for another")
    func policyPerError() async throws {
        let harness = Harness(biometric: true)
        harness.provider.biometricErrorsThatKeepSession = [.canceledByUser, .canceledBySystem]
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .failure(.canceledBySystem))
        try await harness.recorder.waitForEvents(count: 5)
        #expect(harness.handle.sessionStatus == .signedIn)

        harness.handle.requestManualAuthentication()
        try await harness.authenticator.resolveNextPrompt(with: .failure(.biometryLockedout))
        try await harness.recorder.waitForStatus(.signedOut)
        #expect(
            harness.provider.signOutErrors.first.flatMap { $0 as? BiometricAuthenticationError } == .biometryLockedout
        )
    }

    @Test("a sign-out that throws after a biometric failure is reported; the user stays signed out")
    func throwingSignOutAfterFailure() async throws {
        let harness = Harness(biometric: true)
        harness.provider.signOutBehavior = .throwing(URLError(.cannotConnectToHost))
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .failure(.failed))
        let events = try await harness.recorder.waitForEvents(count: 5)
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(events.last?.description.hasPrefix("failure(AuthSessionError.signingOutFailure") == true)
    }
}

@Suite("Manual Authentication")
struct ManualAuthenticationTests {

    /// A handle signed in after a kept biometric failure, with its recorder caught up.
    private func manualHarness(expiresIn: TimeInterval = 3600) async throws -> Harness {
        let harness = Harness(expiresIn: expiresIn, biometric: true)
        harness.provider.biometricErrorsThatKeepSession = Set(BiometricAuthenticationError.allCases)
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .failure(.canceledByUser))
        try await harness.recorder.waitForEvents(count: 5)
        #expect(harness.handle.isManualAuthenticationRequired)
        return harness
    }

    @Test("requestManualAuthentication does nothing when not required")
    func noOpWhenNotRequired() async {
        let harness = Harness(biometric: true)
        harness.provider.publish(.sessionSignIn)
        harness.handle.requestManualAuthentication()
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.authenticator.promptCount == 0)
    }

    @Test("requestManualAuthentication re-runs validation and prompts again; success signs in")
    func reAuthenticates() async throws {
        let harness = try await manualHarness()
        harness.handle.requestManualAuthentication()
        #expect(harness.handle.isManualAuthenticationRequired == false)
        #expect(harness.handle.sessionStatus == .biometricAuthentication)
        try await harness.authenticator.resolveNextPrompt(with: .success)
        try await harness.recorder.waitForEvents(count: 8)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.authenticator.promptCount == 2)
    }

    @Test("requestManualAuthentication with an expiring session signs out")
    func expiringSessionSignsOut() async throws {
        let harness = try await manualHarness()
        harness.clock.advance(by: 3500)
        harness.handle.requestManualAuthentication()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutCount == 1)
    }

    @Test("while manual authentication is required, activations do not prompt")
    func activationsPaused() async throws {
        let harness = try await manualHarness()
        for _ in 0..<3 {
            harness.activation.fire()
        }
        #expect(harness.authenticator.promptCount == 1)
        #expect(harness.handle.isManualAuthenticationRequired)
    }

    @Test("a sessionSignedOut event clears the flag; so does a sign-in")
    func eventsClearFlag() async throws {
        let signedOut = try await manualHarness()
        signedOut.provider.publish(.sessionSignedOut(error: nil))
        #expect(signedOut.handle.isManualAuthenticationRequired == false)

        let signedIn = try await manualHarness()
        signedIn.provider.publish(.sessionSignIn)
        #expect(signedIn.handle.isManualAuthenticationRequired == false)
    }

    @Test("the flag survives a refresh")
    func survivesRefresh() async throws {
        let harness = try await manualHarness()
        harness.provider.publish(.fetchingSession)
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(harness.handle.isManualAuthenticationRequired)
        #expect(harness.handle.sessionStatus == .signedIn)
    }
}

@Suite("Biometric prompt guarantees")
struct BiometricPromptGuaranteeTests {

    @Test("at most one prompt: concurrent triggers from many threads present exactly one")
    func onePromptUnderConcurrency() async throws {
        let harness = Harness(biometric: true)
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        try await harness.authenticator.waitForPendingPrompt()
        harness.activation.fire()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            switch index % 4 {
            case 0: harness.activation.fire()
            case 1: harness.handle.requestManualAuthentication()
            case 2: harness.provider.publish(.sessionFetched(isInitialFetch: true))
            default: harness.provider.publish(.sessionFetched(isInitialFetch: false))
            }
        }
        #expect(harness.authenticator.promptCount == 1)
        #expect(harness.authenticator.pendingPromptCount == 1)
        #expect(harness.handle.isBiometricAuthenticationInProcess)
    }

    @Test("a late success after a sign-out never resurrects signedIn")
    func lateSuccessAfterSignOut() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        harness.provider.publish(.sessionSignedOut(error: nil))
        #expect(harness.handle.sessionStatus == .signedOut)
        harness.authenticator.resolvePendingPrompt(with: .success)
        await harness.handle.waitForBiometricPrompt()
        #expect(!harness.handle.isBiometricAuthenticationInProcess)
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(await harness.statusChanges().last == "biometricAuthentication → signedOut")
    }

    @Test("a late failure after an interactive sign-in does not sign the user out")
    func lateFailureAfterSignIn() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        harness.provider.publish(.sessionSignIn)
        harness.authenticator.resolvePendingPrompt(with: .failure(.failed))
        await harness.handle.waitForBiometricPrompt()
        #expect(!harness.handle.isBiometricAuthenticationInProcess)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.provider.signOutCount == 0)
    }

    @Test("waitForBiometricPrompt returns at once without a prompt, and after the outcome is applied with one")
    func waitForPrompt() async throws {
        let harness = Harness(biometric: true)
        await harness.handle.waitForBiometricPrompt()
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        harness.authenticator.resolvePendingPrompt(with: .success)
        await harness.handle.waitForBiometricPrompt()
        #expect(harness.handle.sessionStatus == .signedIn)
    }

    @Test("the prompt shows the provider's reason")
    func promptReason() async throws {
        let harness = Harness(biometric: true)
        harness.provider.authenticationReason = "Unlock Ledger"
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        #expect(harness.authenticator.reasons == ["Unlock Ledger"])
    }
}
