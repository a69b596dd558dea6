/// A receiver of session lifecycle events from a provider: the inbound channel
/// (provider → handle).
///
/// Providers call ``publish(_:)`` (or ``publish(_:for:)``) from any thread. Hold a publisher
/// weakly: the handle owns it, and it stops forwarding once the handle is gone.
public protocol AuthSessionEventPublisher: AnyObject, Sendable {

    /// Delivers one event.
    ///
    /// - Parameters:
    ///   - event: What happened to the session.
    ///   - sessionProvider: The provider that saw it, or `nil`.
    func publish(_ event: AuthSessionEvent, for sessionProvider: (any AuthSessionProviderProtocol)?)
}

extension AuthSessionEventPublisher {

    /// Delivers one event without naming the provider.
    ///
    /// - Parameter event: What happened to the session.
    public func publish(_ event: AuthSessionEvent) {
        publish(event, for: nil)
    }
}
