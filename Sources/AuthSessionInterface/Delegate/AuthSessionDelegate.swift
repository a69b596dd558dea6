/// An observer of an authentication session handle.
///
/// Subscribe with ``DelegateMultiCasting/subscribeDelegate(_:receive:)``; many delegates can
/// observe one handle, each is held weakly and called asynchronously on the queue it gave.
/// Every method has an empty default, so implement only the callbacks you need.
///
/// Each callback receives the handle (or `nil` if it was deallocated before delivery) and the
/// session as it was when the change happened.
///
/// A delegate learns the state it joins: its first callback is
/// ``authentication(_:didStartObservingWith:for:)`` with the status at the moment it subscribed,
/// and its first ``authentication(_:didUpdateStatus:from:for:)``, if any, starts from that status.
///
/// A `@MainActor` class observes through ``MainActorAuthSessionDelegate`` instead, with the same
/// callbacks.
public protocol AuthSessionDelegate: MultiCastDelegate {

    /// The delegate was subscribed; `sessionStatus` is the status at that moment.
    ///
    /// Called once per subscription, before any other callback of that subscription, so an
    /// observer that subscribes after the launch has settled still learns where the session is.
    /// Status changes that follow form a chain starting at `sessionStatus`: the first
    /// ``authentication(_:didUpdateStatus:from:for:)`` has it as `oldStatus`. Not a status
    /// change itself, so it never repeats one.
    ///
    /// - Parameters:
    ///   - sessionHandle: The handle subscribed to.
    ///   - sessionStatus: The status when the subscription took effect.
    ///   - session: The session as the handle last saw it, or `nil`.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    )

    /// A fetch of the session finished.
    ///
    /// - Parameters:
    ///   - sessionHandle: The handle that observed the fetch.
    ///   - session: The session the fetch produced, or `nil`.
    ///   - isInitialFetch: `true` for the launch-time fetch, `false` for refreshes.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didCompleteFetchWith session: (any AuthSessionProtocol)?,
        isInitialFetch: Bool
    )

    /// The session status changed.
    ///
    /// Consecutive calls form a chain: each call's `oldStatus` is the previous call's
    /// `sessionStatus` (on a serial queue).
    ///
    /// - Parameters:
    ///   - sessionHandle: The handle whose status changed.
    ///   - sessionStatus: The new status.
    ///   - oldStatus: The status before the change.
    ///   - session: The session when the status changed, or `nil`.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    )

    /// The user signed in.
    ///
    /// - Parameters:
    ///   - sessionHandle: The handle that observed the sign-in.
    ///   - user: The signed-in user, or `nil` if the provider has no session yet.
    ///   - session: The new session, or `nil`.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didLoginWith user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    )

    /// The user was signed out.
    ///
    /// - Parameters:
    ///   - sessionHandle: The handle that observed the sign-out.
    ///   - error: Why the session ended (for example ``AuthSessionError/sessionExpired``), or `nil`
    ///     for a voluntary sign-out.
    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?)

    /// The session or its user changed without a change of status.
    ///
    /// - Parameters:
    ///   - sessionHandle: The handle that observed the update.
    ///   - user: The updated user, or `nil`.
    ///   - session: The updated session, or `nil`.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdate user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    )

    /// Something went wrong that the user or the app may need to act on.
    ///
    /// - Parameters:
    ///   - sessionHandle: The handle that observed the failure.
    ///   - error: What went wrong.
    ///   - session: The session when it happened, or `nil`.
    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didFailWith error: AuthSessionError,
        for session: (any AuthSessionProtocol)?
    )
}

extension AuthSessionDelegate {

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
