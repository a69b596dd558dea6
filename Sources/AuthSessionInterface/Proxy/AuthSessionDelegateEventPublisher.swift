/// A receiver of delegate-shaped events from a session handle: the outbound channel
/// (handle → private listener).
///
/// A handle calls ``publish(_:for:)`` once per delegate callback, in the same order its
/// delegates see them. Conform a type that forwards events somewhere (a closure, a stream, a log)
/// and give it to the handle.
public protocol AuthSessionDelegateEventPublisher: AnyObject, Sendable {

    /// Receives one event from `sessionHandle`.
    ///
    /// - Parameters:
    ///   - event: The delegate-shaped event.
    ///   - sessionHandle: The handle that produced it, or `nil` if it is gone.
    func publish(_ event: AuthSessionDelegateEvent, for sessionHandle: (any AuthSessionHandleProtocol)?)

    /// Receives the status at the moment the publisher was subscribed to `sessionHandle`.
    ///
    /// Called once per subscription, before any event of it; the status changes that follow form
    /// a chain starting at `sessionStatus`. Not an `AuthSessionDelegateEvent`, so a `switch`
    /// over events never sees a change that did not happen.
    ///
    /// - Parameters:
    ///   - sessionStatus: The status when the subscription took effect.
    ///   - sessionHandle: The handle subscribed to, or `nil` if it is gone.
    func publishCurrentStatus(
        _ sessionStatus: any AuthSessionStatusProtocol,
        for sessionHandle: (any AuthSessionHandleProtocol)?
    )
}

extension AuthSessionDelegateEventPublisher {

    /// Does nothing; implement it to learn the status when the subscription starts.
    public func publishCurrentStatus(
        _ sessionStatus: any AuthSessionStatusProtocol,
        for sessionHandle: (any AuthSessionHandleProtocol)?
    ) {}
}
