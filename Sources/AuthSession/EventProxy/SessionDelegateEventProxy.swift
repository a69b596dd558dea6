import AuthSessionInterface
import Dispatch
import Foundation

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
/// Subscribed to a handle, it is called on the main queue and runs the closure there and then:
/// once `unsubscribeEventPublisher(_:)` returns, the closure is not called again. Published to
/// from any other thread, it hops to the main queue. Either way the main actor must be running
/// (an app, an `async` entry point, or `dispatchMain()`).
///
/// All operations are thread-safe.
public final class SessionDelegateEventProxy: AuthSessionDelegateEventProxy, AuthSessionDelegateEventPublisher {

    private let eventListening: @MainActor @Sendable (AuthSessionDelegateEvent) -> Void
    private let currentStatus: (@MainActor @Sendable (any AuthSessionStatusProtocol) -> Void)?

    /// Creates a proxy that hands every event to `eventListening` on the main actor.
    ///
    /// - Parameter eventListening: The reaction to each event.
    public init(eventListening: @escaping @MainActor @Sendable (AuthSessionDelegateEvent) -> Void) {
        self.eventListening = eventListening
        self.currentStatus = nil
    }

    /// Creates a proxy that also learns the status when it is subscribed to a handle.
    ///
    /// ```swift
    /// let listener = SessionDelegateEventProxy(
    ///     currentStatus: { status in print("joined while \(status)") },
    ///     eventListening: { event in print(event) }
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - currentStatus: Called on the main actor with the status at subscription, before any
    ///     event of that subscription.
    ///   - eventListening: The reaction to each event.
    public init(
        currentStatus: @escaping @MainActor @Sendable (any AuthSessionStatusProtocol) -> Void,
        eventListening: @escaping @MainActor @Sendable (AuthSessionDelegateEvent) -> Void
    ) {
        self.eventListening = eventListening
        self.currentStatus = currentStatus
    }

    /// Hands `event` to the closure: at once on the main queue, otherwise through it.
    ///
    /// Events published from one thread reach the closure in the order published.
    ///
    /// - Parameters:
    ///   - event: The delegate-shaped event.
    ///   - sessionHandle: Ignored; the closure receives the event only.
    public func publish(_ event: AuthSessionDelegateEvent, for sessionHandle: (any AuthSessionHandleProtocol)?) {
        let eventListening = eventListening
        onMainActor { eventListening(event) }
    }

    /// Hands the status at subscription to the `currentStatus` closure, if the proxy has one.
    ///
    /// - Parameters:
    ///   - sessionStatus: The status when the subscription took effect.
    ///   - sessionHandle: Ignored.
    public func publishCurrentStatus(
        _ sessionStatus: any AuthSessionStatusProtocol,
        for sessionHandle: (any AuthSessionHandleProtocol)?
    ) {
        guard let currentStatus else { return }
        onMainActor { currentStatus(sessionStatus) }
    }

    private func onMainActor(_ body: @escaping @MainActor @Sendable () -> Void) {
        if MainQueue.isCurrent {
            MainActor.assumeIsolated(body)
        } else {
            DispatchQueue.main.async { MainActor.assumeIsolated(body) }
        }
    }
}
