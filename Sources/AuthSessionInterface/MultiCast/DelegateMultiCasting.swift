import Dispatch

/// A type that broadcasts callbacks to many delegates, each on the queue it chose.
///
/// Conformers promise:
/// - subscribers are held weakly: a delegate that is deallocated stops receiving callbacks and
///   never has to unsubscribe;
/// - each callback is delivered asynchronously on the queue given at subscription, never on the
///   caller's thread, so a slow delegate never blocks the broadcaster;
/// - subscribing the same delegate twice counts once (the later queue wins);
/// - once ``unsubscribeDelegate(_:)`` returns, the delegate is never called again, including for
///   callbacks already enqueued, and no callback of it is still running on another thread.
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
    /// When it returns, no callback of `delegate` will run, including those already enqueued; if
    /// one was running on another thread, it has finished. Two exceptions keep this from ever
    /// deadlocking: called from inside the delegate's own callback, that callback runs to its
    /// end (the rest of its step is not delivered); called from inside a callback of another
    /// subscriber (of any broadcaster of this package), it does not wait for a callback of
    /// `delegate` already running on another thread. Do not call it while holding a lock that the delegate's callbacks take.
    func unsubscribeDelegate(_ delegate: Delegate)
}
