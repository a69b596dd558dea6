import AuthSessionInterface
import Dispatch

/// A private listener of a handle: every delegate-shaped event reaches one closure on the main
/// actor, in the order published.
///
/// ```swift
/// @MainActor
/// final class HomeViewModel {
///     private let sessionListener: SessionDelegateEventProxy
///
///     init(handle: AuthSessionHandle<MyProvider>) {
///         sessionListener = SessionDelegateEventProxy { event in
///             if case .sessionStatusChanged(_, let newValue) = event, newValue.isSignedOut {
///                 // reset the view model
///             }
///         }
///         handle.subscribeEventPublisher(sessionListener)
///     }
/// }
/// ```
///
/// Events are delivered through the main dispatch queue, so the main actor must be running (an
/// app, an `async` entry point, or `dispatchMain()`).
///
/// All operations are thread-safe.
public final class SessionDelegateEventProxy: AuthSessionDelegateEventProxy, AuthSessionDelegateEventPublisher {

    private let eventListening: @MainActor @Sendable (AuthSessionDelegateEvent) -> Void

    /// Creates a proxy that hands every event to `eventListening` on the main actor.
    ///
    /// - Parameter eventListening: The reaction to each event.
    public init(eventListening: @escaping @MainActor @Sendable (AuthSessionDelegateEvent) -> Void) {
        self.eventListening = eventListening
    }

    /// Enqueues `event` for the closure on the main actor; returns at once.
    ///
    /// Events published from one thread reach the closure in the order published.
    ///
    /// - Parameters:
    ///   - event: The delegate-shaped event.
    ///   - sessionHandle: Ignored; the closure receives the event only.
    public func publish(_ event: AuthSessionDelegateEvent, for sessionHandle: (any AuthSessionHandleProtocol)?) {
        let eventListening = eventListening
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                eventListening(event)
            }
        }
    }
}
