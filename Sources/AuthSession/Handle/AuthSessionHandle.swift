import AuthSessionInterface
import Dispatch
import Foundation

/// The owner of an authentication session: turns provider events, app activations and biometric
/// outcomes into one status, and tells every observer about each change, in order.
///
/// Create one in the app's composition root and keep it for the app's lifetime:
///
/// ```swift
/// let handle = AuthSessionHandle(sessionProvider: MyProvider())
/// handle.subscribeDelegate(coordinator, receive: .main)
/// ```
///
/// The handle gives its provider an event proxy in
/// `AuthSessionProviderProtocol.initializeSessionProvider(for:)` and
/// reacts to what the provider publishes through it: a launch fetch runs local validation (expiry
/// check, biometric prompt); refreshes and failed fetches re-evaluate the session; sign-in and
/// sign-out events move the status directly. Each time the app becomes active after the first,
/// the session is revalidated, unless a biometric prompt is on screen or manual authentication is
/// required.
///
/// Guarantees beyond the decision trees of the primary spec:
/// - every subscriber sees status changes as a chain: each change's old value is the previous
///   change's new value (on a serial queue), whatever threads the inputs come from;
/// - at most one biometric prompt is on screen; a trigger while one is up presents nothing;
/// - a prompt outcome that arrives after the session was signed out or signed in again changes
///   nothing;
/// - an activation or a manual-authentication request never leaves ``AuthSessionStatus/signedOut``;
/// - a provider may call back into the handle (or publish) synchronously from `signout(with:)`
///   and `initializeSessionProvider(for:)`: no lock is held while the handle calls out.
///
/// All operations are thread-safe. Each input runs as one critical section over the handle's
/// state machine; delegate callbacks are enqueued on their queues in that critical section (an
/// enqueue is not a call-out), and the provider, the biometric authenticator and the delegates
/// themselves are only ever called after the lock is released.
public final class AuthSessionHandle<AuthSessionProvider: AuthSessionProviderProtocol>: AuthSessionHandleProtocol {

    /// Observers conform to `AuthSessionDelegate`.
    public typealias Delegate = any AuthSessionDelegate

    /// The provider that owns the session data.
    public let sessionProvider: AuthSessionProvider
    let biometricAuthenticator: any BiometricAuthenticator
    let clock: any AuthSessionClock
    let state: ConcurrencySafeContainer<HandleState>

    /// Creates a handle with the platform's defaults.
    ///
    /// The defaults: LocalAuthentication for biometric prompts where it exists (elsewhere a
    /// ``SimulatedBiometricAuthenticator`` failing with `.biometryNotAvailable`), the platform's
    /// "did become active" notification on `NotificationCenter.default` (on Linux, post
    /// `Notification.Name.authSessionApplicationDidBecomeActive`), and the system clock.
    ///
    /// - Parameter sessionProvider: The provider that owns the session data. Its
    ///   `initializeSessionProvider(for:)` is called before this initializer returns.
    public convenience init(sessionProvider: AuthSessionProvider) {
        self.init(
            sessionProvider: sessionProvider,
            biometricAuthenticator: makeDefaultBiometricAuthenticator(),
            activationSignal: NotificationCenterActivationSignal(),
            clock: SystemClock()
        )
    }

    /// Creates a handle with the collaborators you choose.
    ///
    /// The event proxy and the authenticator exist before the provider's
    /// `initializeSessionProvider(for:)` is called, so a provider that publishes synchronously
    /// from it is handled like any other. Callbacks for those events reach no observer, since
    /// none can subscribe before the initializer returns: read ``sessionStatus`` once you have
    /// subscribed.
    ///
    /// - Parameters:
    ///   - sessionProvider: The provider that owns the session data.
    ///   - biometricAuthenticator: Presents biometric prompts.
    ///   - activationSignal: Tells when the app becomes active; observed until the handle is
    ///     deallocated.
    ///   - clock: Tells the time for every expiry decision.
    public init(
        sessionProvider: AuthSessionProvider,
        biometricAuthenticator: any BiometricAuthenticator,
        activationSignal: any AppActivationSignal,
        clock: any AuthSessionClock
    ) {
        self.sessionProvider = sessionProvider
        self.biometricAuthenticator = biometricAuthenticator
        self.clock = clock
        self.state = ConcurrencySafeContainer(HandleState())

        let eventProxy = SessionHandleEventProxy { [weak self] event in
            self?.receive(event)
        }
        state.withLock { $0.eventProxy = eventProxy }
        sessionProvider.initializeSessionProvider(for: eventProxy)

        let observation = activationSignal.observe { [weak self] in
            self?.applicationDidBecomeActive()
        }
        state.withLock { $0.activationObservation = observation }
    }

    deinit {
        let (observation, prompt, finishStreams) = state.withLock {
            ($0.activationObservation, $0.biometricPromptTask, $0.streams.removeAll())
        }
        observation?.cancel()
        prompt?.task.cancel()
        finishStreams()
    }

    // MARK: - Reading the state

    /// The provider's current session, or `nil`.
    public var session: AuthSessionProvider.AuthSession? {
        sessionProvider.session
    }

    /// The current status.
    public var sessionStatus: AuthSessionStatus {
        state.withLock { $0.machine.status }
    }

    /// Whether a biometric prompt started by this handle is on screen.
    public var isBiometricAuthenticationInProcess: Bool {
        state.withLock { $0.machine.isBiometricAuthenticationInProcess }
    }

    /// Whether validation is paused until ``requestManualAuthentication()``: `true` after a
    /// biometric failure whose provider kept the session.
    ///
    /// Cleared when the session leaves ``AuthSessionStatus/validating`` or enters
    /// ``AuthSessionStatus/signedOut``, on a `sessionSignedOut` or `sessionSignIn` event, and
    /// when a prompt starts.
    public var isManualAuthenticationRequired: Bool {
        state.withLock { $0.machine.isManualAuthenticationRequired }
    }

    /// The proxy this handle gave its provider.
    var sessionEventProxy: SessionHandleEventProxy? {
        state.withLock { $0.eventProxy }
    }

    // MARK: - Running one input

    /// How many times an input re-reads the world when other inputs keep changing the state
    /// between its read and its step; after that it uses its latest read.
    static var snapshotAttempts: Int { 8 }

    /// Runs one input that decides nothing from the world: one step of the machine under the
    /// lock, its notifications enqueued in the same critical section, its other actions performed
    /// with the lock released.
    ///
    /// - Parameter step: The machine input; receives the provider's session, for observers.
    func run(_ step: (inout SessionStateMachine) -> [SessionAction]) {
        let session = sessionProvider.session
        let effects = state.withLock { state in
            runStep(in: &state, session: session, step)
        }
        perform(effects)
    }

    /// Runs one input that decides from the world (session, expiry, policies).
    ///
    /// The world is read before the lock is taken (reading it calls the provider). If another
    /// input ran in between, the read may be stale, so it is taken again: the step always
    /// decides from a read made after the previous step, unless inputs keep racing it
    /// ``snapshotAttempts`` times.
    ///
    /// - Parameter step: The machine input, given the snapshot to decide from.
    func runReadingWorld(_ step: (inout SessionStateMachine, SessionSnapshot) -> [SessionAction]) {
        for attempt in 1...Self.snapshotAttempts {
            let stepCountBefore = state.withLock { $0.stepCount }
            let session = sessionProvider.session
            let snapshot = snapshot(of: session)
            let effects: [SessionAction]? = state.withLock { state in
                guard state.stepCount == stepCountBefore || attempt == Self.snapshotAttempts else { return nil }
                return runStep(in: &state, session: session) { step(&$0, snapshot) }
            }
            if let effects {
                perform(effects)
                return
            }
        }
    }

    /// One step of the machine, with the lock held: runs it and hands its notifications to every
    /// observer; returns the actions to perform once the lock is released.
    private func runStep(
        in state: inout HandleState,
        session: AuthSessionProvider.AuthSession?,
        _ step: (inout SessionStateMachine) -> [SessionAction]
    ) -> [SessionAction] {
        state.stepCount &+= 1
        let manualBefore = state.machine.isManualAuthenticationRequired
        let actions = step(&state.machine)
        let manualChanged = manualBefore != state.machine.isManualAuthenticationRequired
        return dispatch(actions, session: session, in: state, manualChanged: manualChanged)
    }

    /// What the machine needs to know about the world, read from the provider and the clock.
    func snapshot(of session: AuthSessionProvider.AuthSession?) -> SessionSnapshot {
        let now = clock.now
        return SessionSnapshot(
            session: session.map {
                SessionSnapshot.Expiry(expiresIn: $0.expiresIn(at: now), isSessionExpired: $0.isSessionExpired(at: now))
            },
            allowsLocalSessionValidation: sessionProvider.allowsLocalSessionValidation,
            isSessionAutoRefreshEnabled: sessionProvider.isSessionAutoRefreshEnabled,
            canPerformAuthentication: sessionProvider.canPerformAuthentication()
        )
    }
}

/// Everything mutable in a handle, behind its one lock.
///
/// Not generic (unlike the handle), so every access to it is specialised code.
struct HandleState {
    var machine = SessionStateMachine()
    var subscribers = SubscriberRegistry()
    var streams = StreamRegistry()
    /// Owned here; the provider may hold it weakly.
    var eventProxy: SessionHandleEventProxy?
    var activationObservation: AppActivationObservation?
    /// The task running the latest prompt and applying its outcome.
    var biometricPromptTask: (id: BiometricPromptID, task: Task<Void, Never>)?
    /// Counts the steps run, so an input can tell whether its read of the world is stale.
    var stepCount: UInt64 = 0
}
