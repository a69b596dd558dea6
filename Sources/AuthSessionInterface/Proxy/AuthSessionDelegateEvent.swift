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
