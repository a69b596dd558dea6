/// A private listener of a session handle, built around one main-actor closure.
///
/// A type that must react to session changes without advertising ``AuthSessionDelegate``
/// methods in its public API holds a proxy privately and keeps the whole reaction in the closure
/// given at creation:
///
/// ```swift
/// @MainActor
/// final class HomeViewModel {
///     private var sessionListener: (any AuthSessionDelegateEventProxy)?
///
///     init(sessionListenerType: any AuthSessionDelegateEventProxy.Type) {
///         sessionListener = sessionListenerType.init { [weak self] event in
///             if case .sessionStatusChanged(_, let newValue) = event, newValue.isSignedOut {
///                 self?.reset()
///             }
///         }
///     }
///
///     func reset() {}
/// }
/// ```
///
/// Conformers invoke the closure on the main actor, once per event, in order, and never inspect
/// or change the event.
///
/// The protocol holds only the initializer, so a value of type `any AuthSessionDelegateEventProxy`
/// cannot be fed by itself. A handle is fed through ``AuthSessionDelegateEventPublisher``: give
/// it a type that conforms to both, such as the engine's `SessionDelegateEventProxy`.
public protocol AuthSessionDelegateEventProxy: Sendable {

    /// Creates a proxy that hands every event to `eventListening` on the main actor.
    ///
    /// - Parameter eventListening: The reaction to each event.
    init(eventListening: @escaping @MainActor @Sendable (AuthSessionDelegateEvent) -> Void)
}
