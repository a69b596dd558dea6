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

/// One answer of Sign in with Apple's `getCredentialState(forUserID:completion:)`, as plain
/// values: the state's raw value, and the error that came with it (its domain and code, then its
/// underlying errors', outermost first).
struct AppleIDCredentialAnswer: Sendable, Hashable {

    /// One error of the chain.
    struct ErrorLink: Sendable, Hashable {
        let domain: String
        let code: Int
    }

    /// `ASAuthorizationAppleIDProvider.CredentialState.rawValue`.
    let stateRawValue: Int

    /// The error and its underlying errors (`NSUnderlyingErrorKey`), outermost first; empty when
    /// the answer came without an error.
    let errors: [ErrorLink]

    /// The chain of `error`: its domain and code, then its underlying error's, at most 8 deep.
    static func chain(of error: (any Error)?) -> [ErrorLink] {
        var links: [ErrorLink] = []
        var next = error.map { $0 as NSError }
        while let current = next, links.count < 8 {
            links.append(ErrorLink(domain: current.domain, code: current.code))
            next = current.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        return links
    }
}

extension CredentialState {

    /// `NSURLErrorDomain`.
    static let urlErrorDomain = "NSURLErrorDomain"
    /// The domain of the Apple ID daemon's own errors, which Sign in with Apple passes up.
    static let appleIDErrorDomain = "AKAuthenticationError"
    /// The Apple ID daemon's code for an app without the Sign in with Apple entitlement.
    static let appleIDMissingEntitlementCode = -7026

    /// What one answer of Sign in with Apple's `getCredentialState(forUserID:completion:)` means
    /// for the manager; ``appleIDCredentialState(ask:pause:)`` performs it.
    ///
    /// Apple documents neither the errors that come with an answer nor what they mean. What apps
    /// report: a revocation made on the web comes as `notFound` with an error
    /// (`AuthorizationError` 1000 over the Apple ID daemon's -7074, WordPress-iOS#12572); an app
    /// without the capability gets the daemon's -7026. So:
    ///
    /// | Answer | Meaning |
    /// | --- | --- |
    /// | a state, no error | the state |
    /// | `revoked` or `transferred`, with an error | the state: an explicit verdict, which no network failure produces |
    /// | an `NSURLErrorDomain` error anywhere in the chain | transient: the network; the session stands |
    /// | the Apple ID daemon's -7026 anywhere in the chain | a misconfiguration: the app lacks the Sign in with Apple capability; reported, nothing changes |
    /// | `notFound` with another error | ask again: a verdict only if the second answer says `notFound` too |
    /// | `authorized` with an error | `authorized` |
    /// | a state this package does not know | a misconfiguration, which changes nothing |
    enum AppleIDCheck: Sendable, Hashable {
        /// The answer decides.
        case decided(Result<CredentialState, RemoteAuthError>)
        /// `notFound` with an unexplained error: ask once more before taking it for a verdict.
        case askAgain
    }

    /// The meaning of `answer` (see ``AppleIDCheck``).
    static func appleIDCredentialCheck(_ answer: AppleIDCredentialAnswer) -> AppleIDCheck {
        guard let state = CredentialState(appleIDCredentialStateRawValue: answer.stateRawValue) else {
            return .decided(.failure(RemoteAuthError(.unsupported("credential state \(answer.stateRawValue)"))))
        }
        guard !answer.errors.isEmpty else { return .decided(.success(state)) }
        switch state {
        case .revoked, .transferred, .authorized:
            return .decided(.success(state))
        case .notFound:
            break
        }
        if let network = answer.errors.first(where: { $0.domain == urlErrorDomain }) {
            return .decided(.failure(RemoteAuthError(.network(code: network.code))))
        }
        if answer.errors.contains(where: { $0.domain == appleIDErrorDomain && $0.code == appleIDMissingEntitlementCode }
        ) {
            return .decided(
                .failure(
                    RemoteAuthError(
                        .unsupported(
                            "Sign in with Apple without its capability (the com.apple.developer.applesignin entitlement)"
                        )
                    )
                )
            )
        }
        return .askAgain
    }

    /// The credential state from `ask`, asked once more when the first answer is `notFound` with an
    /// unexplained error: a verdict only when both say so (see ``appleIDCredentialCheck(_:)``).
    ///
    /// - Parameters:
    ///   - ask: One call of `getCredentialState(forUserID:completion:)`.
    ///   - pause: What runs between the two asks (a short sleep); it returns `false` if the
    ///     caller was cancelled meanwhile.
    /// - Returns: The state, or why there is none.
    static func appleIDCredentialState(
        ask: () async -> AppleIDCredentialAnswer,
        pause: () async -> Bool
    ) async -> Result<CredentialState, RemoteAuthError> {
        switch appleIDCredentialCheck(await ask()) {
        case .decided(let result):
            return result
        case .askAgain:
            guard await pause() else { return .failure(RemoteAuthError(.cancelled)) }
            switch appleIDCredentialCheck(await ask()) {
            case .decided(let result): return result
            case .askAgain: return .success(.notFound)
            }
        }
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
    /// - Throws: ``RemoteAuthError``: transient when Apple cannot answer (the network); a
    ///   misconfiguration, which changes nothing, for an app without the Sign in with Apple
    ///   capability or a state this package does not know. A `notFound` that comes with an error
    ///   Apple does not explain is asked again two seconds later, and is a verdict only if the
    ///   second answer says `notFound` too.
    public static func current(forUserID userID: String) async throws(RemoteAuthError) -> CredentialState {
        let result = await CredentialState.appleIDCredentialState {
            await withCheckedContinuation { continuation in
                ASAuthorizationAppleIDProvider().getCredentialState(forUserID: userID) { state, error in
                    continuation.resume(
                        returning: AppleIDCredentialAnswer(
                            stateRawValue: state.rawValue,
                            errors: AppleIDCredentialAnswer.chain(of: error)
                        )
                    )
                }
            }
        } pause: {
            (try? await Task.sleep(nanoseconds: 2_000_000_000)) != nil
        }
        return try result.get()
    }
}
#endif
