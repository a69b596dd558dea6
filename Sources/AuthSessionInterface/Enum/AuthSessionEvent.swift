/// A fact about the session that a provider reports to its handle.
///
/// Providers publish these through the ``AuthSessionEventProxy`` they receive in
/// ``AuthSessionProviderProtocol/initializeSessionProvider(for:)``. The handle maps each one to a
/// status transition and to delegate callbacks.
///
/// - Note: Publish ``sessionFetched(isInitialFetch:)`` with `true` exactly once, for the fetch
///   made at launch; that one fetch runs the full local validation, including the biometric gate.
public enum AuthSessionEvent: Sendable {

    /// A fetch or refresh of the session has started.
    case fetchingSession

    /// A fetch finished; the provider's ``AuthSessionProviderProtocol/session`` holds the result
    /// (possibly `nil`). `isInitialFetch` is `true` only for the launch-time fetch.
    case sessionFetched(isInitialFetch: Bool)

    /// A fetch failed. The provider's current session, if any, is kept and re-evaluated.
    case sessionFetchFailed(any Error)

    /// The user just signed in interactively.
    case sessionSignIn

    /// The user is signed out; `error` is `nil` for a voluntary sign-out.
    case sessionSignedOut(error: (any Error)?)

    /// The session or its user changed without a change of status, for example a profile edit.
    case sessionUpdated((any AuthSessionProtocol)?)

    /// An error that observers should hear about, outside any transition.
    case unexpectedError(AuthSessionError)
}

extension AuthSessionEvent: CustomStringConvertible, CustomReflectable {

    /// A mirror with the token-free description as its only child: `dump` never walks into a
    /// session or an error.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }

    /// A short, token-free summary such as `sessionFetched(initial)`; a session's contents are
    /// never printed.
    public var description: String {
        switch self {
        case .fetchingSession:
            "fetchingSession"
        case .sessionFetched(let isInitialFetch):
            "sessionFetched(\(isInitialFetch ? "initial" : "refresh"))"
        case .sessionFetchFailed(let error):
            "sessionFetchFailed(\(ErrorSummary.describe(error)))"
        case .sessionSignIn:
            "sessionSignIn"
        case .sessionSignedOut(let error):
            "sessionSignedOut(\(error.map(ErrorSummary.describe) ?? "nil"))"
        case .sessionUpdated(let session):
            session == nil ? "sessionUpdated(nil)" : "sessionUpdated(session)"
        case .unexpectedError(let error):
            "unexpectedError(\(error))"
        }
    }
}
