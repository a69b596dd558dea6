#if canImport(LocalAuthentication) && !os(tvOS)
import AuthSessionInterface
import Dispatch
import Foundation
import LocalAuthentication

#if canImport(UIKit)
import UIKit
#endif

/// A biometric authenticator backed by LocalAuthentication (Face ID, Touch ID, Optic ID).
///
/// ```swift
/// let gate = LocalAuthenticationBiometricAuthenticator(policy: .biometricsThenPasscodeAfterLockout)
/// ```
///
/// - **Policy**: ``LocalAuthenticationPolicy/biometricsOrDevicePasscode`` by default, so that a
///   biometry lockout or a device without enrolled biometry never leaves the user stuck; choose
///   ``LocalAuthenticationPolicy/biometricsThenPasscodeAfterLockout`` to ask for the passcode only
///   once biometry is locked, or ``LocalAuthenticationPolicy/biometricsOnly``.
/// - **Fallback button**: hidden with biometrics unless you give it a title, because its only
///   effect there is `BiometricAuthenticationError.fallback`, which your provider's policy must
///   then handle (with your own password screen, say). With the passcode allowed, it leads to the
///   passcode, under the system's title unless you give one.
/// - **Info.plist**: an app that may run on a device with Face ID must have the
///   `NSFaceIDUsageDescription` key, or the system refuses Face ID.
/// - **When**: never while the app is not in front. By default (``BiometricPromptPresentation/automatic``)
///   an iOS app's prompt waits until the app is active, so a launch in the background stays
///   gated instead of failing; an app extension without a user interface (a widget) never
///   prompts and fails at once with `.canceledBySystem`. See ``BiometricPromptPresentation``.
///
/// Each prompt uses a new `LAContext`, so a success is never reused; every call on it runs on one
/// serial queue. Cancelling the prompt's task invalidates the context, which takes the system
/// prompt down and ends the evaluation with `LAError.appCancel` (`.canceledBySystem`). The
/// decisions (which policy to evaluate, the passcode after a lockout, the error for each
/// `LAError` code) are made by portable code tested on every platform; this type only performs
/// them. The portable counterpart for tests is ``SimulatedBiometricAuthenticator``.
///
/// All operations are thread-safe.
public struct LocalAuthenticationBiometricAuthenticator: BiometricAuthenticator {

    /// Which proof of the device's owner the prompt accepts.
    public let policy: LocalAuthenticationPolicy

    /// The fallback button's title, or `nil` for the default: hidden when only biometrics are
    /// accepted, the system's ("Enter Passcode") when the passcode is.
    public let fallbackButtonTitle: String?

    /// The cancel button's title, or `nil` for the system's.
    public let cancelButtonTitle: String?

    /// When the prompt may be presented; decided from the process by default.
    public let presentation: BiometricPromptPresentation

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - policy: Which proof the prompt accepts; biometrics or the device passcode by default.
    ///   - fallbackButtonTitle: A title for the fallback button, to show it with biometrics (your
    ///     provider then receives `.fallback` when the user taps it), or to rename it when the
    ///     passcode is accepted.
    ///   - cancelButtonTitle: A title for the cancel button.
    ///   - presentation: When the prompt may be presented: decided from the process by default
    ///     (an iOS app waits until it is active; a widget never prompts).
    public init(
        policy: LocalAuthenticationPolicy = .biometricsOrDevicePasscode,
        fallbackButtonTitle: String? = nil,
        cancelButtonTitle: String? = nil,
        presentation: BiometricPromptPresentation = .automatic
    ) {
        self.policy = policy
        self.fallbackButtonTitle = fallbackButtonTitle
        self.cancelButtonTitle = cancelButtonTitle
        self.presentation = presentation
    }

    /// Creates an authenticator that accepts biometrics only, or biometrics or the passcode.
    ///
    /// - Parameter allowsDevicePasscodeFallback: `true` for
    ///   ``LocalAuthenticationPolicy/biometricsOrDevicePasscode``, `false` for
    ///   ``LocalAuthenticationPolicy/biometricsOnly``.
    @available(*, deprecated, message: "use init(policy:fallbackButtonTitle:cancelButtonTitle:)")
    public init(allowsDevicePasscodeFallback: Bool) {
        self.init(policy: allowsDevicePasscodeFallback ? .biometricsOrDevicePasscode : .biometricsOnly)
    }

    /// Waits until the prompt can be seen (see ``presentation``), then evaluates the policy with a
    /// fresh `LAContext`, and after a lockout, the passcode when the policy allows it.
    ///
    /// - Parameter reason: The text shown in the system prompt.
    /// - Throws: The `BiometricAuthenticationError` matching the `LAError`; `.canceledBySystem`
    ///   at once where the process never prompts, or when the task is cancelled while it waits.
    public func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        if Task.isCancelled {
            throw .canceledBySystem
        }
        let rule = presentation == .automatic ? BiometricPromptPresentation.currentProcessRule : presentation
        try await rule.waitUntilPresentable(activity: Self.applicationActivity)
        let prompt = LocalAuthenticationPrompt(cancelTitle: cancelButtonTitle)
        try await LocalAuthenticationPlan.run(
            policy: policy,
            fallbackButtonTitle: fallbackButtonTitle,
            canEvaluate: prompt.canEvaluate
        ) { evaluatedPolicy, fallbackTitle in
            await withTaskCancellationHandler {
                await prompt.evaluate(policy: evaluatedPolicy, fallbackTitle: fallbackTitle, reason: reason)
            } onCancel: {
                prompt.invalidate()
            }
        }
    }
}

extension LocalAuthenticationBiometricAuthenticator {

    /// UIKit's application state where UIKit exists; elsewhere (macOS) no state, which counts as
    /// active.
    static let applicationActivity = NotificationApplicationActivity(
        isActive: { applicationIsActive() },
        didBecomeActive: Notification.Name("UIApplicationDidBecomeActiveNotification"),
        center: .default
    )

    /// Whether the shared `UIApplication` is active; `nil` without one. Looked up by key rather
    /// than as `UIApplication.shared`, which app extensions cannot name (this module is compiled
    /// for them too): an extension has no shared application, and gets `nil`.
    @MainActor
    private static func applicationIsActive() -> Bool? {
        #if canImport(UIKit)
        guard let application = UIApplication.value(forKey: "sharedApplication") as? UIApplication else {
            return nil
        }
        return application.applicationState == .active
        #else
        return nil
        #endif
    }
}

/// One prompt's `LAContext`, used only on a serial queue of its own.
// @unchecked: after `init`, `context` is touched only inside blocks run on the serial `queue`, one
// at a time; `LAContext` is not Sendable and Apple documents no thread-safety for it.
private final class LocalAuthenticationPrompt: @unchecked Sendable {

    private let queue = DispatchQueue(label: "AuthSessionKit.LocalAuthenticationPrompt")
    private let context: LAContext

    init(cancelTitle: String?) {
        context = LAContext()
        context.localizedCancelTitle = cancelTitle
    }

    /// `canEvaluatePolicy` for the raw `LAPolicy`: `nil` when it can be evaluated, else the
    /// `LAError` code (`0` for an error of another kind).
    func canEvaluate(_ policyRawValue: Int) -> Int? {
        queue.sync {
            guard let policy = LAPolicy(rawValue: policyRawValue) else { return 0 }
            var error: NSError?
            return context.canEvaluatePolicy(policy, error: &error) ? nil : Self.code(of: error)
        }
    }

    /// Evaluates the raw `LAPolicy`; returns `nil` on success, else the `LAError` code.
    func evaluate(policy policyRawValue: Int, fallbackTitle: String?, reason: String) async -> Int? {
        await withCheckedContinuation { continuation in
            queue.async {
                guard let policy = LAPolicy(rawValue: policyRawValue) else {
                    continuation.resume(returning: 0)
                    return
                }
                self.context.localizedFallbackTitle = fallbackTitle
                self.context.evaluatePolicy(policy, localizedReason: reason) { success, error in
                    continuation.resume(returning: success ? nil : Self.code(of: error))
                }
            }
        }
    }

    /// Takes the prompt down; the evaluation ends with `LAError.appCancel`.
    func invalidate() {
        queue.async { self.context.invalidate() }
    }

    /// The `LAError` code of `error`, or `0` (mapped to `.other`) for anything else.
    static func code(of error: (any Error)?) -> Int {
        (error as? LAError)?.code.rawValue ?? 0
    }
}

extension BiometricAuthenticationError {

    /// The case matching an error from LocalAuthentication (see `init(localAuthenticationCode:)`
    /// for the table); `other` for an error that is not an `LAError`.
    ///
    /// - Parameter error: What `LAContext` reported.
    public init(localAuthenticationError error: (any Error)?) {
        self.init(localAuthenticationCode: LocalAuthenticationPrompt.code(of: error))
    }
}
#endif
