import AuthSessionInterface

/// The inbound proxy a handle gives its provider: forwards every published event to a closure.
///
/// `AuthSessionHandle` creates one around its own event listener, owns it, and passes it to
/// `AuthSessionProviderProtocol.initializeSessionProvider(for:)`. The
/// closure holds the handle weakly, so a provider may keep the proxy (weakly, as recommended, or
/// even strongly) without keeping the handle alive; events published after the handle is gone
/// are dropped.
///
/// Use it on its own to test a provider: create one around a recording closure and pass it to
/// the provider's `initializeSessionProvider(for:)`.
///
/// All operations are thread-safe. The closure runs synchronously on the publishing thread.
public final class SessionHandleEventProxy: AuthSessionEventProxy {

    private let eventListening: @Sendable (AuthSessionEvent) -> Void

    /// Creates a proxy that forwards each published event to `eventListening`.
    ///
    /// - Parameter eventListening: Called once per event, on the publishing thread.
    public init(eventListening: @escaping @Sendable (AuthSessionEvent) -> Void) {
        self.eventListening = eventListening
    }

    /// Forwards `event` to the closure, synchronously.
    ///
    /// - Parameters:
    ///   - event: What happened to the session.
    ///   - sessionProvider: Ignored; the handle knows its provider.
    public func publish(_ event: AuthSessionEvent, for sessionProvider: (any AuthSessionProviderProtocol)?) {
        eventListening(event)
    }
}
