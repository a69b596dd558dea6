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
    /// Cancelling the calling task invalidates the context, which takes the system prompt down
    /// at once and ends the evaluation with `LAError.appCancel` (`.canceledBySystem`).
    ///
    /// - Parameter reason: The text shown in the system prompt.
    /// - Throws: The `BiometricAuthenticationError` matching the `LAError`.
    public func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        let policy: LAPolicy =
            allowsDevicePasscodeFallback ? .deviceOwnerAuthentication : .deviceOwnerAuthenticationWithBiometrics
        if Task.isCancelled {
            throw .canceledBySystem
        }
        let context = ContextBox(LAContext())
        var availabilityError: NSError?
        guard context.value.canEvaluatePolicy(policy, error: &availabilityError) else {
            throw BiometricAuthenticationError(localAuthenticationError: availabilityError)
        }
        let result: Result<Void, BiometricAuthenticationError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                context.value.evaluatePolicy(policy, localizedReason: reason) { success, error in
                    continuation.resume(
                        returning: success
                            ? .success(()) : .failure(BiometricAuthenticationError(localAuthenticationError: error))
                    )
                }
            }
        } onCancel: {
            // Safe from any thread; evaluatePolicy's reply then arrives with LAError.appCancel.
            context.value.invalidate()
        }
        try result.get()
    }
}

/// An `LAContext`, handed to the cancellation handler.
// @unchecked: `LAContext` is documented as usable from any thread; the box only carries it.
private final class ContextBox: @unchecked Sendable {
    let value: LAContext

    init(_ value: LAContext) {
        self.value = value
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
        case .systemCancel, .appCancel, .invalidContext: self = .canceledBySystem
        case .passcodeNotSet: self = .passcodeNotSet
        case .biometryNotAvailable: self = .biometryNotAvailable
        case .biometryNotEnrolled: self = .biometryNotEnrolled
        case .biometryLockout: self = .biometryLockedout
        default: self = .other
        }
    }
}
#endif
