import AuthSession
import Foundation

#if canImport(AuthenticationServices)
import AuthenticationServices
#endif

/// Something that tells a ``ManagedSessionProvider`` the backend revoked the user's credential,
/// without being asked: Sign in with Apple posts a notification when the user stops using Apple
/// ID with the app.
///
/// The manager signs out, once, with ``ManagedSessionError/credentialRevoked(_:)``.
///
/// Conformers must be thread-safe.
public protocol CredentialRevocationSignal: Sendable {

    /// Calls `handler` on every revocation until the returned observation is cancelled or
    /// released.
    ///
    /// - Parameter handler: Called on the thread that reports the revocation.
    /// - Returns: The observation; keep it while you want revocations.
    func observe(_ handler: @escaping @Sendable () -> Void) -> AppActivationObservation
}

/// A ``CredentialRevocationSignal`` that listens for a notification: the portable form of Sign in
/// with Apple's `credentialRevokedNotification`, and what tests post by hand.
///
/// All operations are thread-safe.
public struct NotificationCenterCredentialRevocationSignal: CredentialRevocationSignal {

    /// The notification this package posts for a revocation on platforms without Sign in with
    /// Apple.
    public static let credentialRevoked = Notification.Name("AuthSessionKit.credentialRevoked")

    /// The center listened to.
    public let center: NotificationCenter

    /// The notification that means "revoked".
    public let name: Notification.Name

    /// Creates a signal for `name` on `center`.
    ///
    /// - Parameters:
    ///   - name: The notification; ``credentialRevoked`` by default, or Apple's on its platforms.
    ///   - center: The center; the default center by default.
    public init(name: Notification.Name = Self.platformCredentialRevoked, center: NotificationCenter = .default) {
        self.name = name
        self.center = center
    }

    /// The platform's revocation notification: Sign in with Apple's where it exists, else
    /// ``credentialRevoked``.
    public static var platformCredentialRevoked: Notification.Name {
        #if canImport(AuthenticationServices) && !os(watchOS)
        ASAuthorizationAppleIDProvider.credentialRevokedNotification
        #else
        credentialRevoked
        #endif
    }

    /// Observes the notification.
    ///
    /// - Parameter handler: Called for every post.
    /// - Returns: The observation; cancelling it removes the observer.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> AppActivationObservation {
        let token = NotificationObserverToken(
            center.addObserver(forName: name, object: nil, queue: nil) { _ in handler() }
        )
        let center = center
        return AppActivationObservation { center.removeObserver(token.value) }
    }
}

/// The observer object NotificationCenter returns, carried into a `@Sendable` closure.
private final class NotificationObserverToken: @unchecked Sendable {
    // Safe: set once in init, never mutated; NotificationCenter's removeObserver is thread-safe.
    let value: any NSObjectProtocol

    init(_ value: any NSObjectProtocol) {
        self.value = value
    }
}

extension CredentialState {

    /// Maps the raw value of Sign in with Apple's `ASAuthorizationAppleIDProvider.CredentialState`
    /// (revoked 0, authorized 1, not found 2, transferred 3); `nil` for a value Apple may add.
    ///
    /// - Parameter rawValue: The credential state's `rawValue`.
    public init?(appleIDCredentialStateRawValue rawValue: Int) {
        switch rawValue {
        case 0: self = .revoked
        case 1: self = .authorized
        case 2: self = .notFound
        case 3: self = .transferred
        default: return nil
        }
    }
}

extension CredentialState {

    /// What an answer of Sign in with Apple's `getCredentialState(forUserID:completion:)` means
    /// for the manager; the Apple-only ``AppleIDCredentialState`` only calls this.
    ///
    /// - An answer that carries an error is not a verdict: Apple could not say (no network, a
    ///   server error), so it is a transient failure and the session stands. (Apple may attach an
    ///   error to `notFound` too; a sign-out on it could then come from a network blip, which is
    ///   exactly what the manager never does. A revocation still arrives, by the
    ///   `credentialRevokedNotification` and as `revoked`.)
    /// - A state this package does not know (one Apple may add) is a misconfiguration, which
    ///   changes nothing.
    ///
    /// - Parameters:
    ///   - stateRawValue: The state's `rawValue`.
    ///   - failed: Whether the completion handler received an error.
    static func appleIDCredentialCheck(stateRawValue: Int, failed: Bool) -> Result<CredentialState, RemoteAuthError> {
        if failed {
            return .failure(RemoteAuthError(.network(code: -1)))
        }
        guard let state = CredentialState(appleIDCredentialStateRawValue: stateRawValue) else {
            return .failure(RemoteAuthError(.unsupported("credential state \(stateRawValue)")))
        }
        return .success(state)
    }
}

#if canImport(AuthenticationServices) && !os(watchOS)
/// Sign in with Apple's credential state for a user, as a ``CredentialState``.
///
/// Use it from a ``RemoteAuthService`` that signs in with Apple:
/// `credentialState(for:)` returns `await AppleIDCredentialState.current(forUserID: session.user.identifier)`.
public enum AppleIDCredentialState {

    /// Asks Apple for the state of `userID`'s credential.
    ///
    /// - Parameter userID: The Apple user identifier (the ID token's `sub`).
    /// - Returns: The state.
    /// - Throws: ``RemoteAuthError``, transient when Apple cannot answer; for a state this
    ///   package does not know, a misconfiguration, which changes nothing.
    public static func current(forUserID userID: String) async throws(RemoteAuthError) -> CredentialState {
        let answer: Result<CredentialState, RemoteAuthError> = await withCheckedContinuation { continuation in
            ASAuthorizationAppleIDProvider().getCredentialState(forUserID: userID) { state, error in
                continuation.resume(
                    returning: CredentialState.appleIDCredentialCheck(
                        stateRawValue: state.rawValue,
                        failed: error != nil
                    )
                )
            }
        }
        return try answer.get()
    }
}
#endif
