/// The owner of a session and its provider, observed by many delegates.
///
/// The engine's `AuthSessionHandle` is the implementation; feature modules depend on this
/// protocol so they can be handed a fake in tests.
public protocol AuthSessionHandleProtocol: AnyObject, DelegateMultiCasting
where Delegate == any AuthSessionDelegate {

    /// The provider type the handle drives.
    associatedtype AuthSessionProvider: AuthSessionProviderProtocol

    /// The status type the handle reports.
    associatedtype SessionStatus: AuthSessionStatusProtocol

    /// The provider that owns the session data.
    var sessionProvider: AuthSessionProvider { get }

    /// The provider's current session, or `nil`.
    var session: AuthSessionProvider.AuthSession? { get }

    /// The current status of the session.
    ///
    /// `SessionStatus` is an associated type, so a fake handle declares a concrete status type
    /// (`var sessionStatus: MyStatus`, or the engine's `AuthSessionStatus`), not
    /// `any AuthSessionStatusProtocol`.
    var sessionStatus: SessionStatus { get }

    /// Whether a biometric prompt the handle started is in progress: on screen, being taken down,
    /// or about to be presented in place of one being taken down.
    var isBiometricAuthenticationInProcess: Bool { get }

    /// Whether automatic validation is paused until the user asks for it: `true` after a failed
    /// biometric prompt whose provider kept the session. Call ``requestManualAuthentication()``
    /// to resume.
    var isManualAuthenticationRequired: Bool { get }

    /// Creates a handle that drives `sessionProvider`.
    ///
    /// - Parameter sessionProvider: The provider that owns the session data.
    init(sessionProvider: AuthSessionProvider)

    /// Resumes validation (and the biometric prompt) after a biometric failure kept the session.
    ///
    /// Does nothing unless ``isManualAuthenticationRequired`` is `true`, so it is always safe to
    /// call, for example from a "Try again" button.
    func requestManualAuthentication()

    /// The session status as an async sequence: the status now, then every change, in order.
    ///
    /// Each call creates a consumer of its own with an unbounded buffer, removed when its task is
    /// cancelled or it drops the sequence. The engine's `AuthSessionHandle` gives the exact
    /// chain its delegates see (no gap, no repeat) and finishes the sequence when it is
    /// deallocated. A conformer that does not implement it gets a default built on
    /// ``DelegateMultiCasting/subscribeDelegate(_:receive:)``: in order and never repeating a
    /// status, but a change made while the call subscribes may come first, and the sequence
    /// does not finish by itself.
    ///
    /// ```swift
    /// for await status in handle.statusUpdates() {
    ///     render(status)
    /// }
    /// ```
    ///
    /// - Returns: A sequence that starts with the current status.
    func statusUpdates() -> AsyncStream<SessionStatus>

    /// Every delegate callback as an ``AuthSessionDelegateEvent``, in the order delegates receive
    /// them, from now on.
    ///
    /// The same buffering and removal rules as ``statusUpdates()``. A conformer that does not
    /// implement it gets a default built on ``DelegateMultiCasting/subscribeDelegate(_:receive:)``.
    ///
    /// - Returns: A sequence of the events that happen after the call.
    func delegateEvents() -> AsyncStream<AuthSessionDelegateEvent>
}

extension AuthSessionHandleProtocol {

    /// Whether biometric authentication is on; the provider's
    /// ``AuthSessionProviderProtocol/isBioMetricAuthenticationEnabled``.
    public var isBioMetricAuthenticationEnabled: Bool {
        sessionProvider.isBioMetricAuthenticationEnabled
    }

    /// Turns biometric authentication on or off through the provider.
    ///
    /// - Parameter isEnabled: `true` to gate the session behind a biometric prompt.
    public func setBioMetricAuthentication(_ isEnabled: Bool) {
        sessionProvider.setBioMetricAuthentication(isEnabled)
    }
}
