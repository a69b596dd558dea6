import AuthSession
import AuthSessionInterface
import Foundation

/// A ready session provider: it stores, restores, refreshes, rotates and revokes a session for
/// any ``RemoteAuthService``, so an app writes none of that.
///
/// ```swift
/// let store = try FileSessionStore(applicationName: "com.example.notes")
/// let provider = ManagedSessionProvider(store: store, remote: oauth)
/// let handle = AuthSessionHandle(sessionProvider: provider)
/// try await provider.signIn(with: grant)
/// let token = try await provider.validAccessToken()
/// ```
///
/// Every change flows one way: the remote answers, the store keeps it, and only then does it
/// become ``session`` and an event the handle hears. The manager follows eleven rules (the
/// "Session manager" article): a launch that never flashes the sign-in screen, a refresh token
/// presented at most once (across processes sharing a ``FileSessionStore`` too), proactive and
/// silent refreshes, no sign-out for a network blip, exactly one for a terminal answer,
/// generations that drop late results, profile fields merged, sign-out local first, credential
/// state checked, one shared refresh for all callers, and time on an injectable clock.
///
/// It owns expiry: ``allowsLocalSessionValidation`` is `false` and
/// ``isSessionAutoRefreshEnabled`` is `true`, so the handle never signs a user out for a token
/// the manager is about to refresh.
///
/// All operations are thread-safe.
public final class ManagedSessionProvider: AuthSessionProviderProtocol, CustomReflectable {

    /// The session model: tokens, expiry, user and the biometric setting.
    public typealias AuthSession = ManagedSession

    /// Where the session is kept between launches.
    public let store: any SessionStore

    /// The backend that issues, refreshes and revokes tokens.
    public let remote: any RemoteAuthService

    /// How refreshes and sign-ins retry transient failures. A refresh is never retried after an
    /// answer that may have been lost (``RemoteAuthError/isOutcomeUncertain``) within one try;
    /// see ``refresh()``.
    public let retryPolicy: RetryPolicy

    /// The clock expiry, the proactive refresh and the backoff run on.
    public let clock: any AuthSessionClock

    /// The tunable parts.
    public let configuration: Configuration

    let state: ConcurrencySafeContainer<ProviderState>
    /// Orders the store's writes with the commits that follow them: held around "check the
    /// generation, write, commit", never across a network call.
    // A one-byte value, not `()`: a zero-size value shares its address with the lock, and
    // ThreadSanitizer then reports the lock's own read as a race on it.
    let writeLock = ConcurrencySafeContainer<UInt8>(0)
    /// Who this manager's refresh leases name: this process, and an instance of this manager's own.
    let leaseOwner = RefreshLease.Owner.inThisProcess()
    /// The session stream's subscribers and the observer.
    let instrumentation: ManagerInstrumentation

    /// Creates a manager. It starts when a handle is created with it.
    ///
    /// - Parameters:
    ///   - store: Where the session is kept.
    ///   - remote: The backend.
    ///   - retryPolicy: How transient failures are retried; ``RetryPolicy/standard`` by default.
    ///   - clock: The clock; the system's by default.
    ///   - configuration: The tunable parts.
    public init(
        store: any SessionStore,
        remote: any RemoteAuthService,
        retryPolicy: RetryPolicy = .standard,
        clock: any AuthSessionClock = SystemClock(),
        configuration: Configuration = Configuration()
    ) {
        self.store = store
        self.remote = remote
        self.retryPolicy = retryPolicy
        self.clock = clock
        self.configuration = configuration
        self.instrumentation = ManagerInstrumentation(observer: configuration.observer)
        self.state = ConcurrencySafeContainer(
            ProviderState(
                machine: ManagedSessionMachine(
                    configuration: configuration,
                    verdictsAreFinal: remote.credentialStateIsFinal
                )
            )
        )
    }

    deinit {
        let leftovers = state.withLock { state in
            (state.tasks.values.map(\.timer), state.observations, state.registrations)
        }
        state.withLock { $0.noticeObservation }?.cancel()
        for timer in leftovers.0 { timer.cancel() }
        for observation in leftovers.1 { observation.cancel() }
        for registration in leftovers.2 { registration.cancel() }
        instrumentation.changes.finish()
    }

    /// The session's token-free description only: `dump` never walks into the tokens the
    /// manager keeps (its redaction registrations, its waiters).
    public var customMirror: Mirror {
        Mirror(self, children: ["session": session.map { "\($0)" } ?? "none"], displayStyle: .class)
    }

    // MARK: - Inputs and effects

    /// Runs one machine step under the lock, then its effects and the events it queued.
    func input(_ step: (inout ManagedSessionMachine, Date) -> [ManagerEffect]) {
        let now = clock.now
        let effects = state.withLock { step(&$0.machine, now) }
        perform(effects)
        drainOutbox()
    }

    /// Runs `effects` in order, then publishes the queued events, and only then resumes the
    /// callers the effects answer: a caller whose wait ends finds the handle already told.
    func perform(_ effects: [ManagerEffect]) {
        var answers: [(waiters: [SessionWaiter], result: Result<ManagedSession, ManagedSessionError>)] = []
        for effect in effects {
            switch effect {
            case .load(let generation):
                let result: Result<ManagedSession?, SessionStoreError>
                do throws(SessionStoreError) {
                    result = .success(try usable(store.load()))
                } catch {
                    result = .failure(error)
                    instrumentation.delivery.send(.storeFailed(error, during: .launch))
                    if Self.isRefusal(error) {
                        state.withLock { $0.storeRefusedItself = true }
                    }
                }
                input { machine, now in machine.loaded(result, generation: generation, now: now) }
                // Whatever the session's read gave: the revocations are a file of their own (checked
                // as carefully), and a tool that never activates has only its launches to make them.
                retryPendingRevocationsInBackground()
            case .reloadLater(let generation, let delay):
                schedule(.storage, after: delay) { provider in
                    provider.perform([.load(generation: generation)])
                    provider.drainOutbox()
                }
            case .refresh(let flight):
                startRefresh(flight)
            case .checkCredential(let session, let generation):
                checkCredential(session, generation: generation)
            case .armTimer(let date, let generation, let decision):
                if let date {
                    schedule(.refresh, at: date, decision: decision) { provider in
                        provider.input { machine, now in machine.timerFired(generation: generation, now: now) }
                    }
                } else {
                    let now = clock.now
                    let (disarmed, waiters) = state.withLock {
                        state -> (ScheduledTask?, [CheckedContinuation<Void, Never>]) in
                        guard decision > state.lastTimerDecision else { return (nil, []) }
                        state.lastTimerDecision = decision
                        let disarmed = state.tasks.removeValue(forKey: .refresh)
                        // A timer that was due kept a waiter for idleness waiting: it may be idle now.
                        return (disarmed, disarmed == nil ? [] : state.takeIdleWaiters(now: now))
                    }
                    if let disarmed { disarmed.timer.cancel { taskEnded(.refresh, id: disarmed.id) } }
                    for waiter in waiters { waiter.resume() }
                }
            case .rewriteLater(let generation, let delay):
                schedule(.rewrite, after: delay) { provider in provider.rewrite(generation: generation) }
            case .writeBack(let generation):
                writeBack(generation: generation)
            case .resume(let waiters, let result):
                answers.append((waiters, result))
            case .redact(let session, let decision):
                let registrations = [session?.accessToken, session?.refreshToken, session?.idToken]
                    .compactMap { $0 }
                    .map(SecretRedactor.register)
                let replaced = state.withLock { state -> [SecretRegistration] in
                    // A decision performed late never replaces a later one's tokens.
                    guard decision > state.lastRedactionDecision else { return registrations }
                    state.lastRedactionDecision = decision
                    defer { state.registrations = registrations }
                    return state.registrations
                }
                for registration in replaced { registration.cancel() }
            case .signOut(let error, let generation):
                // The manager's own sign-outs remove only the session they end: the same user
                // signed in again by a process sharing the store keeps that session. A final
                // credential verdict is about the user: it removes the user's session, whatever
                // tokens another process rotated it to.
                let removal: StoredSessionRemoval =
                    switch error {
                    case .signedOutElsewhere: .nothing
                    case .credentialRevoked where remote.credentialStateIsFinal: .thisUser
                    default: .endedSession
                    }
                _ = performSignOut(
                    error: error,
                    reason: error,
                    ifGeneration: generation,
                    revokes: false,
                    removing: removal
                )
            }
        }
        guard !answers.isEmpty else { return }
        drainOutbox()
        for (waiters, result) in answers {
            for waiter in waiters {
                waiter.continuation.resume(with: result.mapError { $0 })
            }
        }
    }

    /// Publishes queued events in order, from one thread at a time. An event published while
    /// another thread is publishing (a handle that calls back into the provider) waits its turn.
    func drainOutbox() {
        let proxy: (any AuthSessionEventProxy)?? = state.withLock { state in
            if state.isDraining { return .none }
            state.isDraining = true
            return .some(state.proxy)
        }
        guard let proxy else { return }
        while true {
            let now = clock.now
            var settled: [CheckedContinuation<Void, Never>] = []
            let next = state.withLock {
                state -> (event: AuthSessionEvent, session: ManagedSession?, signOut: QueuedSignOut?)? in
                guard let next = state.machine.takeEvent() else {
                    state.isDraining = false
                    // The last events are published (and the launch may have settled).
                    settled = state.takeIdleWaiters(now: now)
                    return nil
                }
                let signOut = SignOutLedger.isSignOut(next.event) ? state.signOuts.drained() : nil
                return (next.event, next.session, signOut)
            }
            guard let (event, session, signOut) = next else {
                for waiter in settled { waiter.resume() }
                return
            }
            instrumentation.published(event, session: session, signOut: signOut)
            proxy?.publish(event, for: self)
        }
    }
}
