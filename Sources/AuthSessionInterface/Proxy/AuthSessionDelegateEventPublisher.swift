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
}
