import AuthSessionInterface
import Foundation

/// Why a ``ManagedSessionProvider`` call failed, or why it signed a user out.
///
/// Every case says what the app may do next: sign in again (``notSignedIn``,
/// ``credentialRevoked(_:)``, ``signedOutElsewhere``, a terminal ``remote(_:)``), retry later (a
/// transient ``remote(_:)``, ``storage(_:)``), or fix its setup (a misconfigured
/// ``remote(_:)``). No case carries a token, and neither does ``description``.
///
/// For a person, `localizedDescription` (``errorDescription``) and ``recoverySuggestion`` say
/// what went wrong and what to do ("Wrong username or password.", "You are offline."); see
/// ``problem``. For a developer, ``description`` names the case and its cause.
///
/// All operations are thread-safe.
public enum ManagedSessionError: Error, Sendable, Hashable, CustomStringConvertible {

    /// No session: nobody is signed in, or the launch found none.
    case notSignedIn

    /// The session has no refresh token and its access token is spent: only a new sign-in helps.
    case refreshUnavailable

    /// The backend failed or refused; ``RemoteAuthError/kind`` says whether the session stands.
    case remote(RemoteAuthError)

    /// The store failed. When this is why a launch keeps loading, the session is kept and the
    /// load is retried; after a refresh, the new tokens are kept in memory and the write retried.
    case storage(SessionStoreError)

    /// The backend says the credential no longer stands (checked at launch and on activation, or
    /// pushed, as Sign in with Apple does).
    case credentialRevoked(CredentialState)

    /// The store shared with other processes no longer holds this session: another process
    /// signed out, or signed in as someone else.
    case signedOutElsewhere

    /// A sign-out or another sign-in happened while this call was under way; its result was
    /// dropped (and the tokens it obtained revoked).
    case superseded

    /// The calling task was cancelled. A shared refresh goes on for the other callers.
    case cancelled

    /// The user deleted their account (``ManagedSessionProvider/deleteAccount()``): the backend
    /// deleted it, and the manager signed out. The sign-out's error, never a call's.
    case accountDeleted

    /// The token needs a refresh, and this process only reads the session
    /// (``ManagedSessionProvider/Configuration/Role/readOnly``: a widget, an extension): the
    /// process that refreshes (the app) renews it, and this one hears of it through the store.
    /// The session stands.
    case readOnly

    /// Whether the session is over: the app should show sign-in. This describes errors of token
    /// calls, refreshes and events; a failed ``ManagedSessionProvider/signIn(with:)`` leaves the
    /// session there was, whatever this says.
    public var endsSession: Bool {
        switch self {
        case .notSignedIn, .refreshUnavailable, .credentialRevoked, .signedOutElsewhere, .accountDeleted: true
        case .remote(let error): error.kind == .terminal
        case .storage, .superseded, .cancelled, .readOnly: false
        }
    }

    /// The case and its cause, without any token.
    public var description: String {
        switch self {
        case .notSignedIn: "notSignedIn"
        case .refreshUnavailable: "refreshUnavailable"
        case .remote(let error): "remote(\(error))"
        case .storage(let error): "storage(\(error))"
        case .credentialRevoked(let state): "credentialRevoked(\(state))"
        case .signedOutElsewhere: "signedOutElsewhere"
        case .superseded: "superseded"
        case .cancelled: "cancelled"
        case .accountDeleted: "accountDeleted"
        case .readOnly: "readOnly"
        }
    }
}

extension ManagedSessionError: LocalizedError {

    /// The person's message, from ``problem``: "Wrong username or password.", "You are
    /// offline.", "Your session has ended, please sign in again."; through
    /// ``AuthProblem/localizer``. Never a server's text, a path or a token: the developer's
    /// detail is ``description``.
    public var errorDescription: String? { problem.message }

    /// What the person can do, from ``problem``.
    public var recoverySuggestion: String? { problem.recoverySuggestion }
}
