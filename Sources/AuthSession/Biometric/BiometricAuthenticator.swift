import AuthSessionInterface

/// Presents a biometric prompt and reports how it ended.
///
/// `AuthSessionHandle` calls ``authenticate(reason:)`` from a task of its own when its decision
/// tree requires a prompt, and never while another prompt it started is still on screen. The
/// call returns when the prompt is dismissed; the handle treats the time in between as "prompt
/// in progress".
///
/// The package ships ``SimulatedBiometricAuthenticator`` (the default where LocalAuthentication
/// does not exist, such as Linux), `LocalAuthenticationBiometricAuthenticator` on Apple
/// platforms, and a hand-resolved prompt in `AuthSessionMocks` for tests. Conform your own type
/// to gate the session another way (a PIN pad, a hardware key).
///
/// Conformers must be thread-safe, and must honour task cancellation: when the handle abandons a
/// prompt (its session signed out, or a user signed in), it cancels the task that called
/// ``authenticate(reason:)``, and the prompt should go away at once and throw
/// `BiometricAuthenticationError.canceledBySystem`. A prompt that ignores cancellation stays on
/// screen until answered, its answer is ignored, and a decision that needs a new prompt waits for
/// it to end.
public protocol BiometricAuthenticator: Sendable {

    /// Presents the prompt and waits until it is dismissed.
    ///
    /// - Parameter reason: Why the app asks, shown in the prompt; from the provider's
    ///   `BiometricAuthenticationRequestor.preferredAuthenticationReason()`.
    /// - Throws: `BiometricAuthenticationError` when the user was not
    ///   authenticated: cancelled, failed, locked out, unavailable.
    func authenticate(reason: String) async throws(BiometricAuthenticationError)
}

/// The authenticator `AuthSessionHandle.init(sessionProvider:)` uses on this platform.
///
/// `LocalAuthenticationBiometricAuthenticator` where LocalAuthentication exists; elsewhere a
/// ``SimulatedBiometricAuthenticator`` that fails with
/// `BiometricAuthenticationError.biometryNotAvailable`: there is no biometric hardware, so the
/// gate fails closed and the provider's failure policy decides. The simulated prompt stays up for
/// a fifth of a second, as a system prompt would, so the status is observably
/// `.biometricAuthentication` before the failure lands.
func makeDefaultBiometricAuthenticator() -> any BiometricAuthenticator {
    #if canImport(LocalAuthentication) && !os(tvOS)
    LocalAuthenticationBiometricAuthenticator()
    #else
    SimulatedBiometricAuthenticator(outcome: .failure(.biometryNotAvailable), latency: 0.2)
    #endif
}
