/// An observer of a session handle that lives on the main actor: a `@MainActor` coordinator,
/// view model or window controller.
///
/// The same callbacks as ``AuthSessionDelegate``, isolated to the main actor, so a main-actor
/// class conforms without `nonisolated` or `MainActor.assumeIsolated`:
///
/// ```swift
/// @MainActor
/// final class AppCoordinator: MainActorAuthSessionDelegate {
///     var screen = "splash"
///
///     func authentication(
///         _ sessionHandle: (any AuthSessionHandleProtocol)?,
///         didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
///         from oldStatus: any AuthSessionStatusProtocol,
///         for session: (any AuthSessionProtocol)?
///     ) {
///         screen = sessionStatus.isSignedIn ? "home" : sessionStatus.isSignedOut ? "sign-in" : "splash"
///     }
/// }
///
/// handle.subscribeDelegate(coordinator)   // no queue: callbacks run on the main actor
/// ```
///
/// Subscribe with ``AuthSessionHandleProtocol/subscribeDelegate(_:)``. The delegate is held
/// weakly, called on the main actor, in order, starting with
/// ``authentication(_:didStartObservingWith:for:)``; every callback has an empty default.
/// `unsubscribeDelegate(_:)` with the same delegate, called on the main actor, stops every
/// callback at once.
@MainActor
public protocol MainActorAuthSessionDelegate: AnyObject, Sendable {

    /// The delegate was subscribed; `sessionStatus` is the status at that moment. See
    /// ``AuthSessionDelegate/authentication(_:didStartObservingWith:for:)``.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    )

    /// A fetch of the session finished. See
    /// ``AuthSessionDelegate/authentication(_:didCompleteFetchWith:isInitialFetch:)``.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didCompleteFetchWith session: (any AuthSessionProtocol)?,
        isInitialFetch: Bool
    )

    /// The session status changed; consecutive calls form a chain. See
    /// ``AuthSessionDelegate/authentication(_:didUpdateStatus:from:for:)``.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    )

    /// The user signed in. See ``AuthSessionDelegate/authentication(_:didLoginWith:for:)``.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didLoginWith user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    )

    /// The user was signed out. See ``AuthSessionDelegate/authentication(_:didLogoutWith:)``.
    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?)

    /// The session or its user changed without a change of status. See
    /// ``AuthSessionDelegate/authentication(_:didUpdate:for:)``.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdate user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    )

    /// Something went wrong. See ``AuthSessionDelegate/authentication(_:didFailWith:for:)``.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didFailWith error: AuthSessionError,
        for session: (any AuthSessionProtocol)?
    )
}

extension MainActorAuthSessionDelegate {

    /// Does nothing; implement it to learn the status when the subscription starts.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {}

    /// Does nothing; implement it to hear about completed fetches.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didCompleteFetchWith session: (any AuthSessionProtocol)?,
        isInitialFetch: Bool
    ) {}

    /// Does nothing; implement it to hear about status changes.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {}

    /// Does nothing; implement it to hear about sign-ins.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didLoginWith user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {}

    /// Does nothing; implement it to hear about sign-outs.
    public func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {}

    /// Does nothing; implement it to hear about user updates.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdate user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {}

    /// Does nothing; implement it to hear about failures.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didFailWith error: AuthSessionError,
        for session: (any AuthSessionProtocol)?
    ) {}
}
