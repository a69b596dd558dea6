/// An ``AuthSessionEventPublisher`` that forwards every event to a closure.
///
/// A handle creates one around its own event listener and hands it to its provider in
/// ``AuthSessionProviderProtocol/initializeSessionProvider(for:)``, so the provider never needs
/// to know the handle's type. Conformers call the closure synchronously, on the publishing
/// thread, once per event.
public protocol AuthSessionEventProxy: AuthSessionEventPublisher {

    /// Creates a proxy that forwards each published event to `eventListening`.
    ///
    /// - Parameter eventListening: Called once per event, on the thread that published it.
    init(eventListening: @escaping @Sendable (AuthSessionEvent) -> Void)
}
