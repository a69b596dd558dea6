import AuthSessionInterface

/// A biometric authenticator that always ends the same way, at once.
///
/// The default authenticator where LocalAuthentication does not exist (it then fails with
/// `BiometricAuthenticationError.biometryNotAvailable`), and a way to
/// run a handle with a known outcome, for example in a command-line client or a demo.
///
/// ```swift
/// let handle = AuthSessionHandle(
///     sessionProvider: provider,
///     biometricAuthenticator: SimulatedBiometricAuthenticator(outcome: .success),
///     activationSignal: NotificationCenterActivationSignal(),
///     clock: SystemClock()
/// )
/// ```
///
/// All operations are thread-safe.
public struct SimulatedBiometricAuthenticator: BiometricAuthenticator {

    /// How every simulated prompt ends.
    public enum Outcome: Hashable, Sendable {
        /// The user is authenticated.
        case success
        /// The prompt fails with the given error.
        case failure(BiometricAuthenticationError)
    }

    /// How every prompt ends.
    public let outcome: Outcome

    /// Creates an authenticator whose prompts all end with `outcome`.
    ///
    /// - Parameter outcome: The result of every prompt.
    public init(outcome: Outcome) {
        self.outcome = outcome
    }

    /// Returns at once, or throws the configured error.
    ///
    /// - Parameter reason: Ignored.
    /// - Throws: The configured `BiometricAuthenticationError`, if the
    ///   outcome is a failure.
    public func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        if case .failure(let error) = outcome {
            throw error
        }
    }
}
