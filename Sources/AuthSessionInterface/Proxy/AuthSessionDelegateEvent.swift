/// One ``AuthSessionDelegate`` callback as a value, for listeners that prefer one `switch` to six
/// methods.
///
/// | Case | Delegate method |
/// | --- | --- |
/// | ``sessionFetch(isInitial:)`` | `authentication(_:didCompleteFetchWith:isInitialFetch:)` |
/// | ``login`` | `authentication(_:didLoginWith:for:)` |
/// | ``logout(error:)`` | `authentication(_:didLogoutWith:)` |
/// | ``sessionStatusChanged(oldValue:newValue:)`` | `authentication(_:didUpdateStatus:from:for:)` |
/// | ``failure(error:)`` | `authentication(_:didFailWith:for:)` |
/// | ``userUpdate`` | `authentication(_:didUpdate:for:)` |
public enum AuthSessionDelegateEvent: Sendable {

    /// A fetch finished; `isInitial` is `true` for the launch-time fetch.
    case sessionFetch(isInitial: Bool)

    /// The user signed in.
    case login

    /// The user was signed out; `error` is `nil` for a voluntary sign-out.
    case logout(error: (any Error)?)

    /// The status changed from `oldValue` to `newValue`.
    case sessionStatusChanged(oldValue: any AuthSessionStatusProtocol, newValue: any AuthSessionStatusProtocol)

    /// Something went wrong.
    case failure(error: AuthSessionError)

    /// The session or its user changed without a change of status.
    case userUpdate
}

extension AuthSessionDelegateEvent: CustomStringConvertible, CustomReflectable {

    /// A mirror with the token-free description as its only child: `dump` never walks into an
    /// underlying error.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }

    /// A short, token-free summary such as `statusChanged(syncing → signedIn)` or
    /// `logout(AuthSessionError.sessionExpired: …)`.
    public var description: String {
        switch self {
        case .sessionFetch(let isInitial):
            "sessionFetch(\(isInitial ? "initial" : "refresh"))"
        case .login:
            "login"
        case .logout(let error):
            "logout(\(error.map(ErrorSummary.describe) ?? "nil"))"
        case .sessionStatusChanged(let oldValue, let newValue):
            "statusChanged(\(oldValue) → \(newValue))"
        case .failure(let error):
            "failure(\(error))"
        case .userUpdate:
            "userUpdate"
        }
    }
}
