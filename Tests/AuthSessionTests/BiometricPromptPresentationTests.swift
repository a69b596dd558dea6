import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// An app activity a test drives: inactive until ``becomeActive()``.
private final class ManualApplicationActivity: ApplicationActivity {
    private let signal = OneShotSignal()
    private let waiting = ConcurrencySafeContainer(0)

    /// How many waits have begun.
    var waitCount: Int { waiting.withLock { $0 } }

    func becomeActive() { signal.fire() }

    func waitUntilActive() async -> Bool {
        waiting.withLock { $0 += 1 }
        return await signal.wait()
    }
}

/// The LocalAuthentication authenticator's portable part, over a prompt the test resolves: waits
/// until the rule allows a prompt, then presents it.
private struct PresentedPrompt: BiometricAuthenticator {
    let rule: BiometricPromptPresentation
    let activity: any ApplicationActivity
    let prompt: MockBiometricAuthenticator

    func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        try await rule.waitUntilPresentable(activity: activity)
        try await prompt.authenticate(reason: reason)
    }
}

@Suite("A biometric prompt is presented only where and when it can be seen")
struct BiometricPromptPresentationTests {

    @Test(
        "automatic: an iOS app waits for the app to be active; a widget never prompts; a share extension, a macOS app and a tool prompt at once"
    )
    func automaticRule() {
        func rule(_ lifecycle: ApplicationLifecycle, extension point: String?? = nil) -> BiometricPromptPresentation {
            BiometricPromptPresentation.automatic.resolved(
                lifecycle: lifecycle,
                isExtension: point != nil,
                extensionPoint: point ?? nil
            )
        }
        #expect(rule(.uiKit) == .whenApplicationActive)
        #expect(rule(.appKit) == .immediately)
        #expect(rule(.none) == .immediately)
        #expect(rule(.none, extension: "com.apple.widgetkit-extension") == .never)
        #expect(rule(.none, extension: "com.apple.usernotifications.service") == .never)
        #expect(
            rule(.none, extension: .some(nil)) == .never,
            "an extension that names no point cannot be trusted to show UI"
        )
        #expect(rule(.none, extension: "com.apple.share-services") == .immediately)
        #expect(rule(.none, extension: "com.apple.authentication-services-credential-provider-ui") == .immediately)
        for explicit in [BiometricPromptPresentation.never, .immediately, .whenApplicationActive] {
            #expect(explicit.resolved(lifecycle: .uiKit, isExtension: true, extensionPoint: nil) == explicit)
        }
    }

    @Test(
        "a prompt asked for while the app is not active waits, the launch gated; it is presented once the app becomes active"
    )
    func waitsForActiveApplication() async throws {
        let activity = ManualApplicationActivity()
        let prompt = MockBiometricAuthenticator()
        let harness = Harness(
            biometric: true,
            authenticator: PresentedPrompt(rule: .whenApplicationActive, activity: activity, prompt: prompt)
        )
        harness.launch()
        await harness.handle.waitUntilIdle()
        try await waitUntil { activity.waitCount == 1 }
        #expect(harness.handle.sessionStatus == .biometricAuthentication, "gated, never signed out")
        #expect(prompt.promptCount == 0, "nothing is presented while the app is in the background")
        #expect(harness.provider.signOutCount == 0)

        activity.becomeActive()
        try await prompt.resolveNextPrompt(with: .success, timeout: 60)
        await harness.handle.waitForBiometricPrompt()
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(prompt.promptCount == 1)
    }

    @Test("a process that can never prompt fails at once as not interactive, without presenting anything")
    func neverPrompts() async throws {
        let prompt = MockBiometricAuthenticator()
        let authenticator = PresentedPrompt(rule: .never, activity: ManualApplicationActivity(), prompt: prompt)
        await #expect(throws: BiometricAuthenticationError.canceledBySystem) {
            try await authenticator.authenticate(reason: "Unlock")
        }
        #expect(prompt.promptCount == 0)
    }

    @Test(
        "a prompt abandoned while it waits for the app (the session ended) ends as cancelled by the system, never presented"
    )
    func abandonedWhileWaiting() async throws {
        let activity = ManualApplicationActivity()
        let prompt = MockBiometricAuthenticator()
        let authenticator = PresentedPrompt(rule: .whenApplicationActive, activity: activity, prompt: prompt)
        let waiting = Task { () async -> BiometricAuthenticationError? in
            do throws(BiometricAuthenticationError) {
                try await authenticator.authenticate(reason: "Unlock")
                return nil
            } catch {
                return error
            }
        }
        try await waitUntil { activity.waitCount == 1 }
        waiting.cancel()
        #expect(await waiting.value == .canceledBySystem)
        activity.becomeActive()
        #expect(prompt.promptCount == 0)
    }

    @Test(
        "the notification-driven activity: active now returns at once; otherwise the next 'did become active' ends the wait; no state counts as active"
    )
    func notificationActivity() async throws {
        let center = NotificationCenter()
        let name = Notification.Name("test.didBecomeActive.\(UUID().uuidString)")
        #expect(
            await NotificationApplicationActivity(isActive: { true }, didBecomeActive: name, center: center)
                .waitUntilActive()
        )
        #expect(
            await NotificationApplicationActivity(isActive: { nil }, didBecomeActive: name, center: center)
                .waitUntilActive()
        )

        let reads = ConcurrencySafeContainer(0)
        let inactive = NotificationApplicationActivity(
            isActive: {
                reads.withLock { $0 += 1 }
                return false
            },
            didBecomeActive: name,
            center: center
        )
        let wait = Task { await inactive.waitUntilActive() }
        try await waitUntil { reads.withLock { $0 } == 1 }
        // The state was read after the observer was added: a post from here on ends the wait.
        center.post(name: name, object: nil)
        #expect(await wait.value)

        let cancelled = Task { await inactive.waitUntilActive() }
        try await waitUntil { reads.withLock { $0 } == 2 }
        cancelled.cancel()
        #expect(await cancelled.value == false)
    }
}
