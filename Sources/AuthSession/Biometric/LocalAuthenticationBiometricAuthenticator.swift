#if canImport(LocalAuthentication)
import AuthSessionInterface
import Foundation
import LocalAuthentication

/// A biometric authenticator backed by LocalAuthentication (Face ID, Touch ID, Optic ID).
///
/// Each prompt uses a new `LAContext`, so a success is never reused; cancelling the prompt's task
/// invalidates the context, which takes the system prompt down. Available where
/// LocalAuthentication exists; the portable counterpart the tests exercise is
/// ``SimulatedBiometricAuthenticator``.
///
/// All operations are thread-safe.
public struct LocalAuthenticationBiometricAuthenticator: BiometricAuthenticator {

    /// Whether the device passcode may stand in for biometrics
    /// (`.deviceOwnerAuthentication` rather than `.deviceOwnerAuthenticationWithBiometrics`).
    public let allowsDevicePasscodeFallback: Bool

    /// Creates an authenticator.
    ///
    /// - Parameter allowsDevicePasscodeFallback: `true` to accept the device passcode as well.
    public init(allowsDevicePasscodeFallback: Bool = false) {
        self.allowsDevicePasscodeFallback = allowsDevicePasscodeFallback
    }

    /// Evaluates the policy with a fresh `LAContext`.
    ///
    /// - Parameter reason: The text shown in the system prompt.
    /// - Throws: The `BiometricAuthenticationError` matching the `LAError`.
    public func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        let policy: LAPolicy =
            allowsDevicePasscodeFallback ? .deviceOwnerAuthentication : .deviceOwnerAuthenticationWithBiometrics
        let context = LAContext()
        var availabilityError: NSError?
        guard context.canEvaluatePolicy(policy, error: &availabilityError) else {
            throw BiometricAuthenticationError(localAuthenticationError: availabilityError)
        }
        let result: Result<Void, BiometricAuthenticationError> = await withCheckedContinuation { continuation in
            context.evaluatePolicy(policy, localizedReason: reason) { success, error in
                continuation.resume(
                    returning: success
                        ? .success(()) : .failure(BiometricAuthenticationError(localAuthenticationError: error))
                )
            }
        }
        try result.get()
    }
}

extension BiometricAuthenticationError {

    /// The case matching an error from LocalAuthentication; ``other`` for anything else.
    init(localAuthenticationError error: (any Error)?) {
        guard let error = error as? LAError else {
            self = .other
            return
        }
        switch error.code {
        case .authenticationFailed: self = .failed
        case .userCancel: self = .canceledByUser
        case .userFallback: self = .fallback
        case .systemCancel, .appCancel: self = .canceledBySystem
        case .passcodeNotSet: self = .passcodeNotSet
        case .biometryNotAvailable: self = .biometryNotAvailable
        case .biometryNotEnrolled: self = .biometryNotEnrolled
        case .biometryLockout: self = .biometryLockedout
        default: self = .other
        }
    }
}
#endif
