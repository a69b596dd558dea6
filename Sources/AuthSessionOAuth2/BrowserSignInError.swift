import AuthSessionProviders
import Foundation

/// Why a sign-in in the browser did not end with a grant: ``LoopbackRedirectListener`` and the
/// `ASWebAuthenticationSession` adapter (`WebAuthenticationSessionBrowser`) throw it.
///
/// ``description`` is for developers; ``errorDescription`` and ``recoverySuggestion`` are for
/// the person at the screen. None of them carries a code, a state or a token.
///
/// All operations are thread-safe.
public enum BrowserSignInError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {

    /// The sign-in was cancelled: the person closed the sign-in sheet, the waiting task was
    /// cancelled, or the listener was closed.
    case cancelled

    /// No redirect arrived before the listener's deadline.
    case timedOut

    /// The loopback listener could not listen or read (the system's reason, without any secret).
    case listenerFailed(String)

    /// The system could not present the sign-in page (no or an invalid presentation context, or
    /// the session did not start).
    case presentationFailed(String)

    /// The redirect URI cannot be received this way (an `https` callback before iOS 17.4 or
    /// macOS 14.4, or a scheme the browser session cannot watch).
    case unsupportedRedirectURI(String)

    /// The redirect arrived and is refused, or carries the server's error (`access_denied` when
    /// the person declined).
    case redirect(AuthorizationRedirectError)

    /// The authorization request could not be made (no authorization endpoint, an insecure one).
    case request(RemoteAuthError)

    /// The redirect was received and the manager's sign-in with its code failed.
    case signIn(ManagedSessionError)

    /// What happened, for a developer; never a secret.
    public var description: String {
        switch self {
        case .cancelled: return "the browser sign-in was cancelled"
        case .timedOut: return "no redirect arrived before the deadline"
        case .listenerFailed(let reason): return "the loopback listener failed: \(reason)"
        case .presentationFailed(let reason): return "the sign-in page could not be presented: \(reason)"
        case .unsupportedRedirectURI(let reason): return "the redirect URI cannot be received: \(reason)"
        case .redirect(let error): return "the redirect was refused: \(error)"
        case .request(let error): return "the authorization request could not be made: \(error)"
        case .signIn(let error): return "the sign-in with the code failed: \(error)"
        }
    }

    /// What went wrong, as the person at the screen would put it; the wrapped error's own
    /// problem for a refused redirect, a request that could not be made, or a failed sign-in.
    public var problem: AuthProblem {
        switch self {
        case .cancelled: .signInDeclined
        case .timedOut: .signInTimedOut
        case .listenerFailed, .presentationFailed, .unsupportedRedirectURI: .appMisconfigured
        case .redirect(let error): error.problem
        case .request(let error): error.problem
        case .signIn(let error): error.problem
        }
    }

    /// A message a person can read: ``problem``'s, translated by `AuthProblem.localizer` when the
    /// app sets one.
    public var errorDescription: String? { problem.message }

    /// What the person can do about it: ``problem``'s suggestion.
    public var recoverySuggestion: String? { problem.recoverySuggestion }
}

extension BrowserSignInError: SessionEndingError {

    /// `false`: a sign-in that failed leaves the session there was, if any, as it was.
    public var endsSession: Bool { false }
}
