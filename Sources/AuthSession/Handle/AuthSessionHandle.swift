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
/// sign-out events move the status directly. Each time the app becomes active the session is
/// revalidated, except for the first activation (which only arms revalidation; without an app
/// lifecycle the launch counts as that one), the first after a prompt (the prompt's own
/// dismissal, with an app lifecycle), and while a prompt is in progress or manual
/// authentication is required.
///
/// Guarantees beyond the decision trees of the primary spec:
/// - inputs (provider events, activations, prompt outcomes, manual requests) are applied one at a
///   time, in the order they arrive, and each decides from the provider's state read just before
///   its own step: never from a read that an earlier input made stale;
/// - every subscriber sees status changes as a chain: each change's old value is the previous
///   change's new value (on a serial queue), whatever threads the inputs come from;
/// - at most one biometric prompt is on screen; a prompt belongs to the session it was presented
///   for, so its outcome never signs in a session that began after it;
/// - an activation or a manual-authentication request never leaves ``AuthSessionStatus/signedOut``;
/// - no lock is held while the handle calls out (provider, authenticator, delegates), so each of
///   them may call back into the handle synchronously.
///
/// All operations are thread-safe. An input is applied by the thread that brings it when no
/// input is being applied: then, when `publish`, ``requestManualAuthentication()`` or an
/// activation returns, the input has been applied and every observer's callbacks enqueued. When
/// an input is being applied, by another thread or by this one (a provider that publishes from
/// inside a call the handle makes to it), the new input is queued and applied in order, right
/// after the ones before it; ``waitUntilIdle()`` waits for that. One bound: an event the provider
/// publishes on the applying thread from inside the handle's read of it (a getter, a policy
/// answer) for an input that was itself published that way is dropped, and the handle then
/// decides once more from a fresh read of the provider (so a dropped sign-out is not lost), so a
/// getter that publishes each time it is read costs a bounded number of steps per input instead
/// of feeding the handle for ever (a getter that has another thread publish, and waits for it, is not recognised). Delegate callbacks and stream elements are handed over under the handle's lock, in step
/// order; the provider, the authenticator and the delegates themselves are only ever called with
/// no lock of the handle held.
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
    /// `Notification.Name.authSessionApplicationDidBecomeActive`; the launch counts as the first
    /// activation), and the system clock.
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
    /// from it is handled like any other. Observers subscribed afterwards learn the status that
    /// produced: a delegate's first callback is `authentication(_:didStartObservingWith:for:)`,
    /// and ``statusUpdates()`` starts with the current status.
    ///
    /// - Parameters:
    ///   - sessionProvider: The provider that owns the session data.
    ///   - biometricAuthenticator: Presents biometric prompts.
    ///   - activationSignal: Tells when the app becomes active; observed until the handle is
    ///     deallocated. Its ``AppActivationSignal/hasApplicationLifecycle`` says whether the
    ///     launch counts as the first activation.
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
        self.state = ConcurrencySafeContainer(
            HandleState(machine: SessionStateMachine(hasApplicationLifecycle: activationSignal.hasApplicationLifecycle))
        )

        let eventProxy = SessionHandleEventProxy { [weak self] event in
            self?.submit(.event(event))
        }
        state.withLock { $0.eventProxy = eventProxy }
        sessionProvider.initializeSessionProvider(for: eventProxy)

        let observation = activationSignal.observe { [weak self] in
            self?.submit(.activation)
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

    /// Whether a biometric prompt started by this handle is on screen (or being taken down, or
    /// about to be presented in place of one being taken down).
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

    /// Returns once every input the handle had received when it was called has been applied:
    /// its step run, its callbacks enqueued, and its calls out made (a provider sign-out called,
    /// a prompt's task started; the authenticator may not have been called yet).
    ///
    /// Inputs are provider events, activations, prompt outcomes and manual-authentication
    /// requests. A thread that publishes while another is applying inputs returns before its own
    /// input is applied; this waits for it. It does not wait for a prompt on screen to be
    /// answered (see ``waitForBiometricPrompt()``), nor for delegates to run their callbacks.
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isIdle = state.withLock { state in
                state.inputs.addIdleWaiter(continuation)
            }
            if isIdle {
                continuation.resume()
            }
        }
    }
}

/// Everything mutable in a handle, behind its one lock.
///
/// Not generic (unlike the handle), so every access to it is specialised code.
struct HandleState {
    var machine: SessionStateMachine
    var subscribers = SubscriberRegistry()
    var streams = StreamRegistry()
    var inputs = InputQueue()
    /// Owned here; the provider may hold it weakly.
    var eventProxy: SessionHandleEventProxy?
    var activationObservation: AppActivationObservation?
    /// The task running the latest prompt and applying its outcome.
    var biometricPromptTask: (id: BiometricPromptID, task: Task<Void, Never>)?

    /// The next input to apply (`nil` stops the applying thread), and whether its step reads the
    /// user for an observation model.
    mutating func nextInput() -> (input: HandleInput?, readsUser: Bool) {
        (inputs.next(), streams.hasObservationConsumers)
    }
}
