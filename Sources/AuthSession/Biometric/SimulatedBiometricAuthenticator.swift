import AuthSessionInterface
import Foundation

/// A biometric authenticator that always ends the same way, after an optional delay.
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

    /// How long each simulated prompt stays up before it ends, in seconds.
    public let latency: TimeInterval

    /// Creates an authenticator whose prompts all end with `outcome`.
    ///
    /// - Parameters:
    ///   - outcome: The result of every prompt.
    ///   - latency: How long each prompt stays up, as a person takes a moment to answer one;
    ///     `0` ends it at once.
    public init(outcome: Outcome, latency: TimeInterval = 0) {
        self.outcome = outcome
        self.latency = max(latency, 0)
    }

    /// Waits ``latency`` seconds, then returns or throws the configured error.
    ///
    /// - Parameter reason: Ignored.
    /// - Throws: The configured `BiometricAuthenticationError` if the outcome is a failure;
    ///   `.canceledBySystem` if the task is cancelled while the prompt is up.
    public func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        if Task.isCancelled {
            throw .canceledBySystem
        }
        if latency > 0 {
            do {
                try await Task.sleep(nanoseconds: UInt64(latency * 1_000_000_000))
            } catch {
                throw .canceledBySystem
            }
        }
        if case .failure(let error) = outcome {
            throw error
        }
    }
}
