import Dispatch

/// A type that broadcasts callbacks to many delegates, each on the queue it chose.
///
/// Conformers promise:
/// - subscribers are held weakly: a delegate that is deallocated stops receiving callbacks and
///   never has to unsubscribe;
/// - each callback is delivered asynchronously on the queue given at subscription, never on the
///   caller's thread, so a slow delegate never blocks the broadcaster;
/// - subscribing the same delegate twice counts once (the later queue wins);
/// - after ``unsubscribeDelegate(_:)`` returns, no callback is enqueued for that delegate.
public protocol DelegateMultiCasting: Sendable {

    /// The delegate type observers conform to, usually `any SomeDelegateProtocol`.
    associatedtype Delegate

    /// Subscribes `delegate` to every future callback, delivered asynchronously on `queue`.
    ///
    /// - Parameters:
    ///   - delegate: The observer; held weakly.
    ///   - queue: Where the observer's callbacks run. A serial queue (such as `.main`) receives
    ///     them in the order they were broadcast.
    func subscribeDelegate(_ delegate: Delegate, receive queue: DispatchQueue)

    /// Stops callbacks to `delegate`; does nothing if it is not subscribed.
    ///
    /// Callbacks already enqueued on the delegate's queue may still run.
    func unsubscribeDelegate(_ delegate: Delegate)
}
