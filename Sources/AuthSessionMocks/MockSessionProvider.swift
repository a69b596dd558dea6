import AuthSession
import AuthSessionInterface
import Foundation

/// A session provider a test scripts: its session and every policy answer are settable, it
/// records sign-outs, and it publishes whatever events the test asks for.
///
/// ```swift
/// let provider = MockSessionProvider(session: MockSession(expiresIn: 3600, from: clock.now))
/// let handle = AuthSessionHandle(
///     sessionProvider: provider,
///     biometricAuthenticator: MockBiometricAuthenticator(),
///     activationSignal: ManualActivationSignal(),
///     clock: clock
/// )
/// provider.publish(.fetchingSession)
/// provider.publish(.sessionFetched(isInitialFetch: true))
/// ```
///
/// By default `signout(with:)` behaves as a real provider: it clears the session and publishes
/// `.sessionSignedOut(error:)` synchronously. Set ``signOutBehavior`` to make it throw or stay
/// silent. `canPerformAuthentication()` answers ``isBioMetricAuthenticationEnabled``.
///
/// All operations are thread-safe.
public final class MockSessionProvider: AuthSessionProviderProtocol {

    /// The session model.
    public typealias AuthSession = MockSession

    /// What `signout(with:)` does.
    public enum SignOutBehavior: Sendable {
        /// Clears the session, then publishes `.sessionSignedOut(error:)` synchronously.
        case clearsSessionAndPublishes
        /// Throws the error and keeps the session.
        case throwing(any Error)
        /// Clears the session and publishes nothing.
        case silent
    }

    private struct State {
        var session: MockSession?
        var isBioMetricAuthenticationEnabled: Bool
        var allowsLocalSessionValidation: Bool
        var isSessionAutoRefreshEnabled: Bool
        var biometricErrorsThatKeepSession: Set<BiometricAuthenticationError> = []
        var signOutBehavior = SignOutBehavior.clearsSessionAndPublishes
        var authenticationReason = "Unlock your account"
        var eventsOnInitialize: [AuthSessionEvent]
        weak var eventProxy: (any AuthSessionEventProxy)?
        var initializeCount = 0
        var signOutErrors: [(any Error)?] = []
        var publishedEvents: [AuthSessionEvent] = []
    }

    private let state: ConcurrencySafeContainer<State>

    /// One field of the state, read or written under the lock.
    private subscript<Value>(field: WritableKeyPath<State, Value>) -> Value {
        get { state.withLock { $0[keyPath: field] } }
        set { state.withLock { $0[keyPath: field] = newValue } }
    }

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - session: The current session.
    ///   - isBioMetricAuthenticationEnabled: Whether biometrics are on (and may prompt).
    ///   - allowsLocalSessionValidation: The local-validation policy.
    ///   - isSessionAutoRefreshEnabled: The auto-refresh policy.
    ///   - eventsOnInitialize: Events published synchronously from inside
    ///     `initializeSessionProvider(for:)`, as a provider with a cached session might.
    public init(
        session: MockSession? = nil,
        isBioMetricAuthenticationEnabled: Bool = false,
        allowsLocalSessionValidation: Bool = true,
        isSessionAutoRefreshEnabled: Bool = false,
        eventsOnInitialize: [AuthSessionEvent] = []
    ) {
        state = ConcurrencySafeContainer(
            State(
                session: session,
                isBioMetricAuthenticationEnabled: isBioMetricAuthenticationEnabled,
                allowsLocalSessionValidation: allowsLocalSessionValidation,
                isSessionAutoRefreshEnabled: isSessionAutoRefreshEnabled,
                eventsOnInitialize: eventsOnInitialize
            )
        )
    }

    // MARK: - Scripted answers

    /// The current session; set it to script a fetch, a refresh or an expiry.
    public var session: MockSession? {
        get { self[\.session] }
        set { self[\.session] = newValue }
    }

    /// Whether biometrics are on; also what `canPerformAuthentication()` answers.
    public var isBioMetricAuthenticationEnabled: Bool {
        get { self[\.isBioMetricAuthenticationEnabled] }
        set { self[\.isBioMetricAuthenticationEnabled] = newValue }
    }

    /// The local-validation policy.
    public var allowsLocalSessionValidation: Bool {
        get { self[\.allowsLocalSessionValidation] }
        set { self[\.allowsLocalSessionValidation] = newValue }
    }

    /// The auto-refresh policy.
    public var isSessionAutoRefreshEnabled: Bool {
        get { self[\.isSessionAutoRefreshEnabled] }
        set { self[\.isSessionAutoRefreshEnabled] = newValue }
    }

    /// The biometric failures that keep the session (the policy answers `false` for them);
    /// every other failure signs out. Empty by default.
    public var biometricErrorsThatKeepSession: Set<BiometricAuthenticationError> {
        get { self[\.biometricErrorsThatKeepSession] }
        set { self[\.biometricErrorsThatKeepSession] = newValue }
    }

    /// What `signout(with:)` does.
    public var signOutBehavior: SignOutBehavior {
        get { self[\.signOutBehavior] }
        set { self[\.signOutBehavior] = newValue }
    }

    /// The prompt reason.
    public var authenticationReason: String {
        get { self[\.authenticationReason] }
        set { self[\.authenticationReason] = newValue }
    }

    // MARK: - AuthSessionProviderProtocol

    /// Keeps `eventProxy` weakly and publishes ``init(session:isBioMetricAuthenticationEnabled:allowsLocalSessionValidation:isSessionAutoRefreshEnabled:eventsOnInitialize:)``'s
    /// `eventsOnInitialize` through it, synchronously.
    ///
    /// - Parameter eventProxy: The handle's proxy.
    public func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        let events = state.withLock { state in
            state.eventProxy = eventProxy
            state.initializeCount += 1
            state.publishedEvents += state.eventsOnInitialize
            return state.eventsOnInitialize
        }
        for event in events {
            eventProxy.publish(event)
        }
    }

    /// Sets ``isBioMetricAuthenticationEnabled``.
    ///
    /// - Parameter isEnabled: The new value.
    public func setBioMetricAuthentication(_ isEnabled: Bool) {
        isBioMetricAuthenticationEnabled = isEnabled
    }

    /// Records the call, then acts as ``signOutBehavior`` says.
    ///
    /// - Parameter error: Recorded in ``signOutErrors``.
    /// - Throws: The error of ``SignOutBehavior/throwing(_:)``.
    public func signout(with error: (any Error)?) throws {
        let (behavior, proxy) = state.withLock { state in
            state.signOutErrors.append(error)
            switch state.signOutBehavior {
            case .clearsSessionAndPublishes:
                state.session = nil
                state.publishedEvents.append(.sessionSignedOut(error: error))
            case .silent:
                state.session = nil
            case .throwing:
                break
            }
            return (state.signOutBehavior, state.eventProxy)
        }
        switch behavior {
        case .clearsSessionAndPublishes:
            proxy?.publish(.sessionSignedOut(error: error))
        case .silent:
            break
        case .throwing(let failure):
            throw failure
        }
    }

    /// ``authenticationReason``.
    public func preferredAuthenticationReason() -> String {
        authenticationReason
    }

    /// ``isBioMetricAuthenticationEnabled``.
    public func canPerformAuthentication() -> Bool {
        isBioMetricAuthenticationEnabled
    }

    /// `false` for the errors in ``biometricErrorsThatKeepSession``, `true` otherwise.
    ///
    /// - Parameter error: Why the prompt failed.
    public func allowsSessionSigningOutOnBiometricAuthenticationFailure(
        with error: BiometricAuthenticationError
    ) -> Bool {
        !biometricErrorsThatKeepSession.contains(error)
    }

    // MARK: - Driving the handle

    /// Publishes `event` through the handle's proxy, synchronously.
    ///
    /// - Parameter event: The event.
    /// - Returns: `false` if there is no proxy (never initialized, or the handle is gone).
    @discardableResult
    public func publish(_ event: AuthSessionEvent) -> Bool {
        let proxy = state.withLock { state in
            state.publishedEvents.append(event)
            return state.eventProxy
        }
        proxy?.publish(event)
        return proxy != nil
    }

    /// The proxy the handle gave, while the handle is alive.
    public var eventProxy: (any AuthSessionEventProxy)? {
        state.withLock { $0.eventProxy }
    }

    // MARK: - History

    /// How many times `initializeSessionProvider(for:)` ran.
    public var initializeCount: Int {
        state.withLock { $0.initializeCount }
    }

    /// The error of every `signout(with:)` call, in order (`nil` for a voluntary sign-out).
    public var signOutErrors: [(any Error)?] {
        state.withLock { $0.signOutErrors }
    }

    /// How many times `signout(with:)` ran.
    public var signOutCount: Int {
        state.withLock { $0.signOutErrors.count }
    }

    /// Every event published, by the test or by the provider itself, in order.
    public var publishedEvents: [AuthSessionEvent] {
        state.withLock { $0.publishedEvents }
    }

    /// Forgets the history (initialize count, sign-outs, published events); keeps the session,
    /// the policies and the proxy.
    public func reset() {
        state.withLock { state in
            state.initializeCount = 0
            state.signOutErrors = []
            state.publishedEvents = []
        }
    }
}
