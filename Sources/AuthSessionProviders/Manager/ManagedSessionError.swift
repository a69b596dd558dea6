import AuthSessionInterface
import Foundation

/// Why a ``ManagedSessionProvider`` call failed, or why it signed a user out.
///
/// Every case says what the app may do next: sign in again (``notSignedIn``,
/// ``credentialRevoked(_:)``, ``signedOutElsewhere``, a terminal ``remote(_:)``), retry later (a
/// transient ``remote(_:)``, ``storage(_:)``), or fix its setup (a misconfigured
/// ``remote(_:)``). No case carries a token, and neither does ``description``.
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

    /// Whether the session is over: the app should show sign-in. This describes errors of token
    /// calls, refreshes and events; a failed ``ManagedSessionProvider/signIn(with:)`` leaves the
    /// session there was, whatever this says.
    public var endsSession: Bool {
        switch self {
        case .notSignedIn, .refreshUnavailable, .credentialRevoked, .signedOutElsewhere: true
        case .remote(let error): error.kind == .terminal
        case .storage, .superseded, .cancelled: false
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
        }
    }
}

extension ManagedSessionError: LocalizedError {

    /// A sentence for a log or a support screen, without any token.
    public var errorDescription: String? {
        switch self {
        case .notSignedIn: "Nobody is signed in."
        case .refreshUnavailable: "The session expired and cannot be refreshed; sign in again."
        case .remote(let error): "The authorization server failed: \(error)."
        case .storage(let error): "The session store failed: \(error.errorDescription ?? "\(error)")"
        case .credentialRevoked(let state): "The credential is no longer valid (\(state)); sign in again."
        case .signedOutElsewhere: "The session was ended by another process sharing its store."
        case .superseded: "A sign-in or sign-out happened meanwhile; this result was dropped."
        case .cancelled: "Cancelled."
        }
    }
}
