import AuthSessionInterface

/// Which proof of the device's owner a LocalAuthentication prompt accepts.
///
/// Used by `LocalAuthenticationBiometricAuthenticator` on Apple platforms. Every choice needs the
/// `NSFaceIDUsageDescription` key in the app's Info.plist on a device with Face ID.
public enum LocalAuthenticationPolicy: String, Hashable, Sendable, CaseIterable {

    /// Face ID, Touch ID or Optic ID only (`.deviceOwnerAuthenticationWithBiometrics`). After too
    /// many failed attempts biometry locks, and every prompt fails with
    /// `BiometricAuthenticationError.biometryLockedout` until the user unlocks the device with the
    /// passcode; without enrolled biometry it fails with `.biometryNotEnrolled`. For apps whose own
    /// fallback (a password screen) handles those errors.
    case biometricsOnly

    /// Biometrics, and the device passcode only once biometry is locked out: the prompt that
    /// finds biometry locked (or locks it) is followed by the passcode prompt, and entering the
    /// passcode unlocks biometry again. A biometric attempt that fails (`authenticationFailed`) is
    /// followed by a new `canEvaluatePolicy`, since Apple does not promise that the attempt which
    /// locks biometry reports `biometryLockout`: locked out now, the passcode prompt follows.
    case biometricsThenPasscodeAfterLockout

    /// Biometrics or the device passcode (`.deviceOwnerAuthentication`): the system offers the
    /// passcode after failed attempts, during a lockout, and on devices without enrolled
    /// biometry. The default: it has no dead end.
    case biometricsOrDevicePasscode
}

/// What a LocalAuthentication prompt does next, decided from raw `LAPolicy` and `LAError` codes so
/// that the decision is portable and tested on every platform; the Apple-only adapter performs it.
enum LocalAuthenticationPlan {

    /// `LAPolicy.deviceOwnerAuthenticationWithBiometrics.rawValue`.
    static let biometricsPolicy = 1
    /// `LAPolicy.deviceOwnerAuthentication.rawValue`.
    static let deviceOwnerPolicy = 2
    /// `LAError.Code.biometryLockout.rawValue`.
    static let biometryLockoutCode = -8
    /// `LAError.Code.authenticationFailed.rawValue`.
    static let authenticationFailedCode = -1

    /// A step of the plan.
    enum Step: Hashable, Sendable {

        /// Evaluate the `LAPolicy` with this raw value, with `fallbackTitle` as the context's
        /// `localizedFallbackTitle` (`""` hides the fallback button, `nil` keeps the system's).
        case evaluate(policy: Int, fallbackTitle: String?)

        /// End with this error.
        case fail(BiometricAuthenticationError)
    }

    /// Runs the plan: evaluates what it says, and after a failure, what it says next.
    ///
    /// - Parameters:
    ///   - policy: The authenticator's policy.
    ///   - fallbackButtonTitle: The title the app gave the fallback button, or `nil`.
    ///   - canEvaluate: `LAContext.canEvaluatePolicy` for a raw `LAPolicy`: `nil` when it can, or
    ///     the `LAError` code it gave.
    ///   - evaluate: `LAContext.evaluatePolicy` of a raw `LAPolicy` with a fallback title: `nil` on
    ///     success, or the `LAError` code it failed with.
    /// - Throws: The error the plan ends with; `.canceledBySystem` if the task is cancelled before
    ///   a prompt.
    static func run(
        policy: LocalAuthenticationPolicy,
        fallbackButtonTitle: String?,
        canEvaluate: (Int) -> Int?,
        evaluate: (_ policy: Int, _ fallbackTitle: String?) async -> Int?
    ) async throws(BiometricAuthenticationError) {
        var step = firstStep(policy: policy, fallbackButtonTitle: fallbackButtonTitle, canEvaluate: canEvaluate)
        while true {
            switch step {
            case .fail(let error):
                throw error
            case .evaluate(let evaluatedPolicy, let fallbackTitle):
                if Task.isCancelled {
                    throw .canceledBySystem
                }
                guard let code = await evaluate(evaluatedPolicy, fallbackTitle) else { return }
                step = stepAfterFailure(
                    code: code,
                    evaluatedPolicy: evaluatedPolicy,
                    policy: policy,
                    fallbackButtonTitle: fallbackButtonTitle,
                    canEvaluate: canEvaluate
                )
            }
        }
    }

    /// The first step.
    ///
    /// - Parameters:
    ///   - policy: The authenticator's policy.
    ///   - fallbackButtonTitle: The title the app gave the fallback button, or `nil` to hide it.
    ///   - canEvaluate: `LAContext.canEvaluatePolicy` for a raw `LAPolicy`: `nil` when it can, or
    ///     the `LAError` code it gave.
    static func firstStep(
        policy: LocalAuthenticationPolicy,
        fallbackButtonTitle: String?,
        canEvaluate: (Int) -> Int?
    ) -> Step {
        switch policy {
        case .biometricsOnly:
            guard let code = canEvaluate(biometricsPolicy) else {
                return .evaluate(policy: biometricsPolicy, fallbackTitle: fallbackButtonTitle ?? "")
            }
            return .fail(BiometricAuthenticationError(localAuthenticationCode: code))
        case .biometricsThenPasscodeAfterLockout:
            guard let code = canEvaluate(biometricsPolicy) else {
                return .evaluate(policy: biometricsPolicy, fallbackTitle: fallbackButtonTitle ?? "")
            }
            guard code == biometryLockoutCode else {
                return .fail(BiometricAuthenticationError(localAuthenticationCode: code))
            }
            return passcodeStep(fallbackButtonTitle: fallbackButtonTitle, canEvaluate: canEvaluate)
        case .biometricsOrDevicePasscode:
            return passcodeStep(fallbackButtonTitle: fallbackButtonTitle, canEvaluate: canEvaluate)
        }
    }

    /// The step after an evaluation of `evaluatedPolicy` failed with the `LAError` code `code`:
    /// under ``LocalAuthenticationPolicy/biometricsThenPasscodeAfterLockout``, the passcode after a
    /// biometric attempt that ended with `biometryLockout`, or with `authenticationFailed` when
    /// `canEvaluate` now says biometry is locked out; otherwise the error.
    static func stepAfterFailure(
        code: Int,
        evaluatedPolicy: Int,
        policy: LocalAuthenticationPolicy,
        fallbackButtonTitle: String?,
        canEvaluate: (Int) -> Int?
    ) -> Step {
        if policy == .biometricsThenPasscodeAfterLockout, evaluatedPolicy == biometricsPolicy {
            if code == biometryLockoutCode {
                // This prompt locked biometry: the passcode unlocks it, in the prompt that follows.
                return passcodeStep(fallbackButtonTitle: fallbackButtonTitle, canEvaluate: canEvaluate)
            }
            // Apple does not say which error the attempt that locks biometry ends with: it may be
            // `authenticationFailed`, the lockout showing only in the next `canEvaluatePolicy`. So
            // after a failed attempt (not a cancellation or the fallback button, which are choices)
            // ask again, and a lockout leads to the passcode as above.
            if code == authenticationFailedCode, canEvaluate(biometricsPolicy) == biometryLockoutCode {
                return passcodeStep(fallbackButtonTitle: fallbackButtonTitle, canEvaluate: canEvaluate)
            }
        }
        return .fail(BiometricAuthenticationError(localAuthenticationCode: code))
    }

    private static func passcodeStep(fallbackButtonTitle: String?, canEvaluate: (Int) -> Int?) -> Step {
        if let code = canEvaluate(deviceOwnerPolicy) {
            return .fail(BiometricAuthenticationError(localAuthenticationCode: code))
        }
        // Here the fallback button leads to the passcode: the system's title unless the app chose one.
        return .evaluate(policy: deviceOwnerPolicy, fallbackTitle: fallbackButtonTitle)
    }
}

extension BiometricAuthenticationError {

    /// The case matching a LocalAuthentication error code (`LAError.Code.rawValue`, in the
    /// `LAErrorDomain`); `other` for a code Apple may add.
    ///
    /// | `LAError.Code` | Raw value | Case |
    /// | --- | --- | --- |
    /// | `authenticationFailed` | -1 | `failed` |
    /// | `userCancel` | -2 | `canceledByUser` |
    /// | `userFallback` | -3 | `fallback` |
    /// | `systemCancel`, `appCancel`, `invalidContext`, `notInteractive` | -4, -9, -10, -1004 | `canceledBySystem` |
    /// | `passcodeNotSet` | -5 | `passcodeNotSet` |
    /// | `biometryNotAvailable`, `companionNotAvailable`, `biometryNotPaired`, `biometryDisconnected` | -6, -11, -12, -13 | `biometryNotAvailable` |
    /// | `biometryNotEnrolled` | -7 | `biometryNotEnrolled` |
    /// | `biometryLockout` | -8 | `biometryLockedout` |
    /// | anything else (`invalidDimensions`, -14, included) | | `other` |
    ///
    /// - Parameter code: The error's code.
    public init(localAuthenticationCode code: Int) {
        switch code {
        case -1: self = .failed
        case -2: self = .canceledByUser
        case -3: self = .fallback
        case -4, -9, -10, -1004: self = .canceledBySystem
        case -5: self = .passcodeNotSet
        case -6, -11, -12, -13: self = .biometryNotAvailable
        case -7: self = .biometryNotEnrolled
        case -8: self = .biometryLockedout
        default: self = .other
        }
    }
}
