import Foundation

/// Why a biometric authentication attempt did not succeed.
///
/// The cases are the outcomes a sign-out policy must tell apart: a user who cancelled may want to
/// retry, a system cancellation (the app moved to the background) is nobody's fault, and a
/// lock-out or a failed match may call for a full sign-out. See
/// ``AuthSessionProviderProtocol/allowsSessionSigningOutOnBiometricAuthenticationFailure(with:)``.
public enum BiometricAuthenticationError: Error, Hashable, Sendable, CaseIterable {

    /// The biometric did not match the enrolled user.
    case failed

    /// The user cancelled the prompt.
    case canceledByUser

    /// The user chose the fallback button (for example "Enter Password").
    case fallback

    /// The system cancelled the prompt, for example because the app moved to the background.
    case canceledBySystem

    /// The device has no passcode, which biometric authentication requires.
    case passcodeNotSet

    /// The device has no biometric hardware, or it is unavailable to this app.
    case biometryNotAvailable

    /// No face or fingerprint is enrolled on the device.
    case biometryNotEnrolled

    /// Biometry is locked after too many failed attempts; the device passcode unlocks it.
    case biometryLockedout

    /// Any other reason.
    case other
}

extension BiometricAuthenticationError: LocalizedError {

    /// A sentence that can be shown to the user.
    public var errorDescription: String? {
        switch self {
        case .failed:
            "Biometric authentication did not recognise you."
        case .canceledByUser:
            "Biometric authentication was cancelled."
        case .fallback:
            "You chose to authenticate another way."
        case .canceledBySystem:
            "Biometric authentication was interrupted by the system."
        case .passcodeNotSet:
            "Set a device passcode to use biometric authentication."
        case .biometryNotAvailable:
            "Biometric authentication is not available on this device."
        case .biometryNotEnrolled:
            "No face or fingerprint is enrolled on this device."
        case .biometryLockedout:
            "Biometric authentication is locked after too many attempts. Enter your passcode to unlock it."
        case .other:
            "Biometric authentication failed."
        }
    }
}
