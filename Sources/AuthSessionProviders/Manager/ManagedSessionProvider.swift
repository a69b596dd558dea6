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

    private let state: ConcurrencySafeContainer<ProviderState>
    /// Orders the store's writes with the commits that follow them: held around "check the
    /// generation, write, commit", never across a network call.
    // A one-byte value, not `()`: a zero-size value shares its address with the lock, and
    // ThreadSanitizer then reports the lock's own read as a race on it.
    private let writeLock = ConcurrencySafeContainer<UInt8>(0)
    /// Who this manager's refresh leases name: this process, and an instance of this manager's own.
    private let leaseOwner = RefreshLease.Owner.inThisProcess()
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
            (state.tasks.values.map(\.task), state.observations, state.registrations)
        }
        state.withLock { $0.noticeObservation }?.cancel()
        for task in leftovers.0 { task.cancel() }
        for observation in leftovers.1 { observation.cancel() }
        for registration in leftovers.2 { registration.cancel() }
        instrumentation.changes.finish()
    }

    /// The session's token-free description only: `dump` never walks into the tokens the
    /// manager keeps (its redaction registrations, its waiters).
    public var customMirror: Mirror {
        Mirror(self, children: ["session": session.map { "\($0)" } ?? "none"], displayStyle: .class)
    }

    // MARK: - AuthSessionProviderProtocol

    /// The runtime session: stored, or (after a rotation whose write failed) about to be.
    public var session: ManagedSession? {
        state.withLock { $0.machine.session }
    }

    /// The persisted biometric setting of the session; `false` without one.
    public var isBioMetricAuthenticationEnabled: Bool {
        session?.isBiometricAuthenticationEnabled ?? false
    }

    /// `false`: the manager owns expiry and refreshes before it.
    public var allowsLocalSessionValidation: Bool { false }

    /// `true`: the manager refreshes the session itself.
    public var isSessionAutoRefreshEnabled: Bool { true }

    /// "Unlock your account".
    public func preferredAuthenticationReason() -> String { "Unlock your account" }

    /// Whether a session exists and its user turned biometrics on.
    public func canPerformAuthentication() -> Bool { isBioMetricAuthenticationEnabled }

    /// Whether a failed biometric prompt ends the session: only for the failures in
    /// ``Configuration/biometricFailuresEndingSession`` (`[.failed]` by default), those that say
    /// the person at the device is not its owner. A cancelled prompt, a prompt the system took
    /// down or could not show, a device without biometry keep the session; the handle requires
    /// manual authentication instead.
    ///
    /// - Parameter error: Why the prompt failed.
    /// - Returns: `true` to sign out.
    public func allowsSessionSigningOutOnBiometricAuthenticationFailure(
        with error: BiometricAuthenticationError
    ) -> Bool {
        configuration.biometricFailuresEndingSession.contains(error)
    }

    /// Starts the manager: publishes `fetchingSession`, loads the store (synchronously, so a
    /// stored valid session is signed in before the handle's initializer returns), and listens for
    /// activations and revocations.
    ///
    /// - Parameter eventProxy: Where events go; held weakly.
    public func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        let activation = configuration.activationSignal.observe { [weak self] in
            // In front again: a background refresh's expiry no longer holds back what starts now.
            self?.state.withLock { $0.backgroundRefreshTime = nil }
            self?.removePendingSession()
            // A notice missed while suspended (or never posted) is made up for: read the store.
            if self?.state.withLock({ $0.machine.phase == .ready }) == true {
                self?.storeChanged()
            }
            self?.input { machine, now in machine.activated(now: now) }
            self?.retryPendingRevocationsInBackground()
        }
        let revocationSignal = configuration.revocationSignal ?? remote.credentialRevocationSignal
        let revocation = revocationSignal?.observe { [weak self] in
            self?.handleCredentialRevocation()
        }
        // A sign-out or rotation by another process sharing the store is heard at once.
        let notices = store.changeNotifier?.observe(
            { [weak self] in self?.storeChanged() },
            onFallback: { [weak self] fallback in
                // Said once: the notices still arrive, by polling.
                self?.instrumentation.delivery.send(.changeNoticesFellBack(fallback))
            }
        )
        state.withLock { state in
            state.proxy = eventProxy
            state.observations = [activation] + (revocation.map { [$0] } ?? [])
            state.noticeObservation = notices
        }
        input { machine, _ in machine.launch() }
    }

    /// Stores the biometric setting with the session. Without a session it does nothing; a store
    /// failure keeps the setting as it was and is reported as
    /// `AuthSessionError.userUpdateFailure(error:)`.
    ///
    /// Returns at once, also while a refresh is out (nothing is held across the network). The
    /// setting is written inside the store's exclusive access, on top of the tokens the store holds
    /// (another process may have rotated them); if another thread or process is inside it at that
    /// instant (for microseconds, or a process suspended there), the write waits for it on a
    /// thread of its own, and the session (and ``isBioMetricAuthenticationEnabled``) changes when
    /// it is stored, with a `sessionUpdated` event as always.
    ///
    /// - Parameter isEnabled: Whether to gate the session behind biometrics.
    public func setBioMetricAuthentication(_ isEnabled: Bool) {
        // While a worker (or another thread's attempt) stores a setting, this one follows it: the
        // last one asked for wins, and it applies to the session it was asked for only.
        let isQueued = state.withLock { state -> Bool in
            guard state.isBiometricWorkerRunning || state.isBiometricWriteInProgress else {
                state.isBiometricWriteInProgress = true
                return false
            }
            state.pendingBiometricSetting = (isEnabled, state.machine.generation)
            return true
        }
        if isQueued { return }
        let generation = state.withLock { $0.machine.generation }
        var attempt: [ManagerEffect]?
        var failure: ManagedSessionError?
        do {
            attempt = try store.withExclusiveAccessIfAvailable { () -> [ManagerEffect] in
                writeLock.withLock { _ in storeBiometricSetting(isEnabled) }
            }
        } catch {
            failure = .storage(Self.storeError(error))
        }
        let startsWorker = state.withLock { state -> Bool in
            state.isBiometricWriteInProgress = false
            if attempt == nil, failure == nil, state.pendingBiometricSetting == nil {
                // Not stored (the access was held): the worker stores it.
                state.pendingBiometricSetting = (isEnabled, generation)
            }
            guard state.pendingBiometricSetting != nil, !state.isBiometricWorkerRunning else { return false }
            state.isBiometricWorkerRunning = true
            return true
        }
        if let failure { reportUpdateFailure(failure) }
        if let effects = attempt { perform(effects) }
        drainOutbox()
        if startsWorker {
            startBiometricWorker()
        }
    }

    /// Stores the latest requested biometric setting, waiting for the store's exclusive access, on
    /// a thread of its own; ends when no setting is pending.
    private func startBiometricWorker() {
        beginOperation()
        let thread = Thread { [self] in
            withBackgroundTask("AuthSessionKit.biometricSetting") { _ in
                while let (isEnabled, generation) = state.withLock({ state -> (Bool, UInt64)? in
                    defer { state.pendingBiometricSetting = nil }
                    if state.pendingBiometricSetting == nil { state.isBiometricWorkerRunning = false }
                    return state.pendingBiometricSetting
                }) {
                    var effects: [ManagerEffect] = []
                    do {
                        effects = try store.withExclusiveAccess { () -> [ManagerEffect] in
                            writeLock.withLock { _ in
                                // Asked for a session that has ended since: not another's to change.
                                guard state.withLock({ $0.machine.generation == generation }) else { return [] }
                                return storeBiometricSetting(isEnabled)
                            }
                        }
                    } catch {
                        reportUpdateFailure(
                            .storage(Self.storeError(error))
                        )
                    }
                    perform(effects)
                    drainOutbox()
                }
            }
            endOperation()
        }
        thread.name = "AuthSessionKit.biometricSetting"
        thread.start()
    }

    /// Writes the setting with the tokens the store holds for this user (adopting another
    /// process's rotation), or with the runtime session's while its own write is pending. Never
    /// over another user's session, and never into a store a process sharing it signed out of:
    /// that is reported, and the next refresh finds the session signed out elsewhere.
    private func storeBiometricSetting(_ isEnabled: Bool) -> [ManagerEffect] {
        // `unsavedOver` is set (to the stored refresh token, which may be nil) while a write
        // is pending.
        let snapshot = state.withLock { state -> (current: ManagedSession, unsavedOver: String??)? in
            guard let session = state.machine.session else { return nil }
            return (session, state.machine.isSessionUnsaved ? .some(state.machine.unsavedOver) : .none)
        }
        guard let (current, unsavedOver) = snapshot else { return [] }
        do throws(SessionStoreError) {
            var updated = current
            guard case .session(let stored) = try loadForCompare() else {
                // Bytes that are no session, set aside by the store: this process's session is
                // the one to keep, written back with the setting.
                updated.isBiometricAuthenticationEnabled = isEnabled
                try store.save(updated)
                return state.withLock { $0.machine.biometricSettingStored(updated) }
            }
            if let unsavedOver {
                // The store holds the tokens the pending write replaces, or (a retried write
                // landed) the runtime session's own.
                guard let stored, [unsavedOver, current.refreshToken].contains(stored.refreshToken) else {
                    reportUpdateFailure(.signedOutElsewhere)
                    return []
                }
            } else {
                guard let stored, stored.isSameIdentity(as: current) else {
                    reportUpdateFailure(.signedOutElsewhere)
                    return []
                }
                updated = stored
            }
            guard updated.isBiometricAuthenticationEnabled != isEnabled || updated != current else { return [] }
            updated.isBiometricAuthenticationEnabled = isEnabled
            try store.save(updated)
            return state.withLock { $0.machine.biometricSettingStored(updated) }
        } catch {
            reportUpdateFailure(.storage(error))
            return []
        }
    }

    /// Queues the biometric setting's failure as `AuthSessionError.userUpdateFailure(error:)`.
    private func reportUpdateFailure(_ cause: ManagedSessionError) {
        let reported = AuthSessionError.userUpdateFailure(error: cause)
        state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
    }

    /// Signs out: local first (the runtime session, the store, the event), then the refresh token
    /// is revoked at the backend, best effort, without waiting for it.
    ///
    /// It removes only what this process owns: the stored session descending from its sign-in
    /// (a rotation another process made included), never a sign-in another process made since.
    /// With no session here it removes nothing once the launch read the store, so calling it to
    /// tidy up after hearing a sign-out is safe.
    ///
    /// - Parameter error: Why (a biometric failure, say), or `nil` for a voluntary sign-out.
    /// - Throws: ``ManagedSessionError/storage(_:)`` when the stored session could not be
    ///   removed. The user is signed out in memory all the same.
    public func signout(with error: (any Error)?) throws {
        if let removeError = performSignOut(
            error: error,
            reason: error as? ManagedSessionError,
            ifGeneration: nil,
            revokes: configuration.revokesOnSignOut
        ) {
            throw ManagedSessionError.storage(removeError)
        }
    }

    // MARK: - The manager's own surface

    /// Signs in with tokens that `obtainTokens` gets by any flow (a device flow's polling, a
    /// browser sign-in), then commits them as ``signIn(with:)`` does: the session is
    /// stored, and only then made the runtime session and published.
    ///
    /// `obtainTokens` runs once, as it is: the ``retryPolicy`` does not retry it. A sign-out or
    /// another sign-in that commits while it runs supersedes this one.
    ///
    /// - Parameters:
    ///   - grantType: The grant the flow ends in (`"authorization_code"`,
    ///     `"urn:ietf:params:oauth:grant-type:device_code"`): what the ``ManagedSessionObserver``
    ///     reports, and what makes an `invalid_grant` read as a person expects ("Wrong username or
    ///     password" for `"password"`).
    ///   - obtainTokens: Gets the tokens.
    /// - Returns: The new session.
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/remote(_:)`` with the error
    ///   `obtainTokens` threw, ``ManagedSessionError/cancelled`` for a `cancelled` one, or what
    ///   ``signIn(with:)`` throws when committing.
    @discardableResult
    public func signIn(
        grantType: String,
        obtainingTokens obtainTokens: () async throws(RemoteAuthError) -> IssuedTokens
    ) async throws(ManagedSessionError) -> ManagedSession {
        try await observingSignIn(grantType: grantType) { () async throws(ManagedSessionError) in
            try await signInUnobserved(grantType: grantType, obtainingTokens: obtainTokens)
        }
    }

    /// ``signIn(grantType:obtainingTokens:)`` without the observer's calls around it.
    private func signInUnobserved(
        grantType: String,
        obtainingTokens obtainTokens: () async throws(RemoteAuthError) -> IssuedTokens
    ) async throws(ManagedSessionError) -> ManagedSession {
        let startGeneration = state.withLock { $0.machine.generation }
        // A store that refused itself at launch (a file open to other users, another user's, a
        // link) would refuse the new session too: say so now, before the server issues tokens
        // for nothing; once it reads again, sign-ins go on as usual.
        if state.withLock({ $0.storeRefusedItself }) {
            let refusal = await onOwnThread { [store] () -> SessionStoreError? in
                do throws(SessionStoreError) {
                    _ = try store.load()
                    return nil
                } catch {
                    return Self.isRefusal(error) ? error : nil
                }
            }
            if let refusal { throw .storage(refusal) }
            state.withLock { $0.storeRefusedItself = false }
        }
        let tokens: IssuedTokens
        do throws(RemoteAuthError) {
            tokens = try await obtainTokens()
        } catch {
            throw error.reason == .cancelled ? .cancelled : .remote(error.presenting(grantType: grantType))
        }
        let now = clock.now
        let subject = tokens.user?.identifier ?? ""
        let known = state.withLock { $0.machine.userToMerge(subject: subject) }
        let issued = makeSession(from: tokens, now: now, previous: nil, knownUser: known)
        // Inside the store's exclusive access, so that no other process's compare-and-save can
        // write over the new session; on a thread of its own, since that access may be held by a
        // process suspended inside it.
        let commit = { @Sendable () -> (SignInCommit, ManagedSession?) in
            self.writeLock.withLock { _ in
                self.commitSignIn(issued, subject: subject, startGeneration: startGeneration, now: now)
            }
        }
        let failed = { @Sendable (error: any Error) -> (SignInCommit, ManagedSession?) in
            let storeError = Self.storeError(error)
            return (.failure(.storage(storeError)), nil)
        }
        var outcome: (SignInCommit, ManagedSession?)?
        do {
            // Usually free: taken at once, on this thread.
            outcome = try store.withExclusiveAccessIfAvailable(commit)
        } catch {
            outcome = failed(error)
        }
        let (committed, replaced) =
            if let outcome {
                outcome
            } else {
                await onOwnThread { () -> (SignInCommit, ManagedSession?) in
                    do {
                        return try self.store.withExclusiveAccess(commit)
                    } catch {
                        return failed(error)
                    }
                }
            }
        switch committed {
        case .success(let (effects, signedIn)):
            wakeLeaseWaiters(afterNotice: false)
            perform(effects)
            drainOutbox()
            if let replaced {
                // The session this sign-in replaced is abandoned: its tokens are revoked.
                revokeInBackground(
                    replaced.refreshToken ?? replaced.accessToken,
                    kind: replaced.refreshToken == nil ? .accessToken : .refreshToken
                )
            }
            return signedIn
        case .failure(let error):
            revokeInBackground(
                tokens.refreshToken ?? tokens.accessToken,
                kind: tokens.refreshToken == nil ? .accessToken : .refreshToken
            )
            throw error
        }
    }

    /// A sign-in's commit, inside the store's exclusive access and the write lock: stores the
    /// session and makes it the runtime one, unless a sign-out or another sign-in committed since
    /// the sign-in started. Returns the effects and the session it replaced.
    private func commitSignIn(
        _ session: ManagedSession,
        subject: String,
        startGeneration: UInt64,
        now: Date
    ) -> (SignInCommit, ManagedSession?) {
        var signedIn = session
        let (generation, current) = state.withLock { ($0.machine.generation, $0.machine.session) }
        guard generation == startGeneration else { return (.failure(.superseded), nil) }
        // The same person signing in again keeps the biometric setting; without a subject,
        // nothing says it is the same person.
        if let current, !subject.isEmpty, current.user.identifier == subject {
            signedIn.isBiometricAuthenticationEnabled = current.isBiometricAuthenticationEnabled
        }
        do throws(SessionStoreError) {
            try store.save(signedIn)
        } catch {
            return (.failure(.storage(error)), nil)
        }
        // Every generation change happens under the write lock: this commit cannot be refused.
        let effects = state.withLock { $0.machine.signedIn(signedIn, startGeneration: startGeneration, now: now) }
        return (.success((effects ?? [], signedIn)), current)
    }

    /// A sign-in's commit: its effects and the session stored, or why it failed.
    private typealias SignInCommit = Result<([ManagerEffect], ManagedSession), ManagedSessionError>

    /// Runs `body` on a thread of its own and returns its result: for work that may block on a
    /// lock another process holds, without holding one of the few threads Swift's tasks run on.
    private func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "AuthSessionKit.store"
            thread.start()
        }
    }

    /// An access token valid for at least `minimumValidity` more seconds: what API calls use.
    ///
    /// Cheap when the token is valid (one lock, one clock read). Otherwise the caller joins the
    /// one refresh in flight, or starts it: any number of concurrent callers, in this process or
    /// in others sharing the store, cause one request. Before the launch finished, the caller
    /// waits for it. Cancelling the caller ends its wait only; the refresh goes on for the others.
    ///
    /// `minimumValidity` is capped at half the token's lifetime as the server granted it: a
    /// caller cannot ask for more validity than the server ever gives, so asking for an hour of a
    /// server that issues one-hour tokens does not refresh on every call. A refreshed token is
    /// returned even if it is still short of `minimumValidity`.
    ///
    /// - Parameter minimumValidity: The seconds the token must still be valid; 30 by default.
    /// - Returns: The access token.
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/notSignedIn``, the refresh's
    ///   failure (the session stands unless ``ManagedSessionError/endsSession``), or
    ///   ``ManagedSessionError/cancelled``.
    @inlinable
    public func validAccessToken(minimumValidity: TimeInterval = 30) async throws(ManagedSessionError) -> String {
        // Inlinable, so that the common case (a valid token: one lock, one clock read) costs the
        // caller no call into an async function of its own.
        if let token = validTokenIfFresh(minimumValidity: minimumValidity) {
            return token
        }
        return try await waitForValidToken(minimumValidity: minimumValidity)
    }

    /// The access token if it stays valid `minimumValidity` more seconds and no refresh is
    /// forced: ``validAccessToken(minimumValidity:)``'s common case.
    @usableFromInline
    func validTokenIfFresh(minimumValidity: TimeInterval) -> String? {
        let now = clock.now
        return state.withLock { $0.machine.validToken(minimumValidity: minimumValidity, now: now) }
    }

    /// The session if its access token stays valid `minimumValidity` more seconds: the common
    /// case of ``validSession(minimumValidity:)``, one lock and one clock read.
    func validSessionIfFresh(minimumValidity: TimeInterval) -> ManagedSession? {
        let now = clock.now
        return state.withLock { $0.machine.validSession(minimumValidity: minimumValidity, now: now) }
    }

    /// ``validAccessToken(minimumValidity:)`` when the token is not valid long enough: joins or
    /// starts the refresh, or waits for the launch.
    @usableFromInline
    func waitForValidToken(minimumValidity: TimeInterval) async throws(ManagedSessionError) -> String {
        try await waitForSession(minimumValidity: max(0, minimumValidity)).accessToken
    }

    /// Refreshes now, whether or not a refresh is due, and returns the refreshed session. Joins a
    /// refresh already in flight instead of starting a second one.
    ///
    /// A refresh presents the stored refresh token once. If its answer is lost (a timeout, a
    /// reset after sending), it is not retried: the server may have spent the token. The session
    /// stands and the next refresh presents the token again; a server with a refresh grace period
    /// accepts it, one without may end the session.
    ///
    /// - Returns: The refreshed session.
    /// - Throws: ``ManagedSessionError``.
    @discardableResult
    public func refresh() async throws(ManagedSessionError) -> ManagedSession {
        try await waitForSession(minimumValidity: nil)
    }

    /// Signs out because the backend revoked the credential (a pushed notification, such as Sign
    /// in with Apple's). Does nothing without a session.
    public func handleCredentialRevocation() {
        guard let generation = state.withLock({ $0.machine.session == nil ? nil : $0.machine.generation }) else {
            return
        }
        let reason = ManagedSessionError.credentialRevoked(.revoked)
        _ = performSignOut(error: reason, reason: reason, ifGeneration: generation, revokes: false)
    }

    /// Deletes the user's account: the backend deletes it (``RemoteAuthService/deleteAccount(of:)``,
    /// which for Sign in with Apple also revokes its tokens at Apple), then the manager signs out
    /// with ``ManagedSessionError/accountDeleted`` (``SignOutCause/accountDeleted`` on the session
    /// stream), without revoking anything again.
    ///
    /// The backend goes first: until it confirms, the account exists, so any failure leaves the
    /// user signed in, to try again. The call gets a valid access token first
    /// (``validSession(minimumValidity:)``, which refreshes if need be). Then whatever session of
    /// that account is signed in is signed out, also one a sign-in committed while the backend
    /// worked; another person's session, signed in meanwhile, is left alone. A sign-out that
    /// comes first keeps its own cause: when the backend's revocation makes the provider revoke
    /// the credential before the backend answers (Sign in with Apple's revocation notification,
    /// say), the session ends with ``ManagedSessionError/credentialRevoked(_:)``, and the call
    /// still returns normally once the backend confirms.
    ///
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/notSignedIn``, the refresh's
    ///   failure, ``ManagedSessionError/superseded`` when another person's sign-in committed while
    ///   the token was got (nothing is deleted) or a sign-in of the account committed during its
    ///   sign-out (the account is deleted), ``ManagedSessionError/remote(_:)`` with the
    ///   backend's error (`unsupported` for a backend that deletes no account),
    ///   ``ManagedSessionError/cancelled``, or ``ManagedSessionError/storage(_:)`` when the stored
    ///   session could not be removed (the user is signed out in memory all the same).
    public func deleteAccount() async throws(ManagedSessionError) {
        let session = try await validSession()
        // Another person's sign-in may have committed since the token was got: never delete theirs.
        guard generation(ofAccountOf: session) != nil else {
            throw .superseded
        }
        do throws(RemoteAuthError) {
            try await remote.deleteAccount(of: session)
        } catch {
            throw error.reason == .cancelled ? .cancelled : .remote(error)
        }
        let reason = ManagedSessionError.accountDeleted
        // The account's session now: the one the call began with, or a sign-in of the same account
        // committed while the backend deleted it. Whatever commits between this read and the
        // sign-out is a new generation, and the sign-out leaves it alone; the call then says so.
        if let current = generation(ofAccountOf: session),
            let removeError = performSignOut(error: reason, reason: reason, ifGeneration: current, revokes: false)
        {
            throw .storage(removeError)
        }
        if generation(ofAccountOf: session) != nil {
            throw .superseded
        }
    }

    /// The generation of the session signed in now when it is `session`'s account; `nil` for none
    /// or another person's.
    private func generation(ofAccountOf session: ManagedSession) -> UInt64? {
        state.withLock { state in
            guard let current = state.machine.session, current.isSameIdentity(as: session) else { return nil }
            return state.machine.generation
        }
    }

    /// Loads the store again at once if the launch is waiting for it (it was unavailable: a device
    /// not yet unlocked, a Keychain item whose access control the user has not yet passed);
    /// otherwise does nothing.
    ///
    /// The manager retries such a store on its own, on activation and on a timer (see
    /// ``Configuration/storageRetryInterval``); call this when you know it became readable, after
    /// `KeychainSessionStore.authenticate(reason:)` for example. Returns at once; the load runs on
    /// the calling thread.
    public func reloadStore() {
        input { machine, _ in machine.storeMayBeAvailable() }
    }

    /// Waits until no refresh, credential check or revocation the manager started is running,
    /// no timer of its (a proactive refresh, a store retry) is due and yet to run, and no thread
    /// is publishing its events; then until every observation it made so far reached the
    /// ``Configuration/observer`` (see ``flushObservations()``). Timers not yet due do not count:
    /// they wait on the clock.
    ///
    /// A command-line tool calls it before it exits, so that a revocation, a write and the
    /// observer's last lines are not cut short. To read the session the launch found, use
    /// ``waitUntilLaunchSettled()`` (or the handle's `waitUntilLaunchSettled()`), which also waits
    /// for the launch itself. A slow observer makes this wait for it.
    public func waitUntilIdle() async {
        await waitForState(launched: false)
        await flushObservations()
    }

    /// Waits until the launch has settled: the store was read, and a stored session that was due
    /// was refreshed (or its refresh failed, or it ended the session); the manager is then idle,
    /// as ``waitUntilIdle()`` says (the launch's credential check included), and every
    /// observation made so far reached the observer.
    ///
    /// After it, ``session`` is the session the launch settled on, and the launch's events were
    /// handed to the handle. A command-line tool reads the session after it; with a handle, call
    /// the handle's `waitUntilLaunchSettled()`, which also waits until the handle applied those
    /// events (its status is no longer `syncing` for them).
    ///
    /// The launch starts when a handle is created with the manager: called before, it waits for
    /// that. A store that cannot be read (``SessionStoreError/unavailable(reason:)``, a locked
    /// device) settles nothing: the wait returns once that first read failed, with no session and
    /// the handle still `syncing`; the manager reads the store again on its
    /// timer (``Configuration/storageRetryInterval``), on activation, or on ``reloadStore()``,
    /// and a later call waits for that read if it is due.
    public func waitUntilLaunchSettled() async {
        await waitForState(launched: true)
        await flushObservations()
    }

    /// Waits until every observation the manager made before this call reached the
    /// ``Configuration/observer``: returns once the observer's `observe(_:)` returned for each.
    ///
    /// Observations are delivered on a queue of the manager's, never on the thread that made
    /// them; this is how a tool or a test makes sure the observer heard them (a process that
    /// exits first loses them). ``waitUntilIdle()`` and ``waitUntilLaunchSettled()`` end with it.
    /// Without an observer it returns at once. Called from inside the observer's `observe(_:)`
    /// (from a task it starts and waits for), it would wait for itself: don't.
    public func flushObservations() async {
        await instrumentation.delivery.delivered()
    }

    /// Waits until the manager is idle and, if `launched`, its launch has settled.
    private func waitForState(launched: Bool) async {
        let now = clock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isIdle = state.withLock { state in
                if state.isIdle(now: now, launched: launched) { return true }
                state.idleWaiters.append(IdleWaiter(requiresLaunch: launched, continuation: continuation))
                return false
            }
            if isIdle { continuation.resume() }
        }
    }

    // MARK: - Waiting

    /// How many callers wait for a refresh or for the launch (for tests).
    var waitingCallerCount: Int {
        state.withLock { $0.machine.waitingCallerCount }
    }

    /// How many callers wait for the manager to be idle or its launch to settle (for tests).
    var idleWaiterCount: Int {
        state.withLock { $0.idleWaiters.count }
    }

    /// How many refreshes wait for another process's lease (for tests).
    var leaseWaiterCount: Int {
        state.withLock { $0.leaseWaiters.count }
    }

    /// The generation: bumped by every sign-out and committed sign-in (for the observer's reports).
    var generationForReports: UInt64 {
        state.withLock { $0.machine.generation }
    }

    func waitForSession(
        minimumValidity: TimeInterval?,
        rejectedAccessToken: String? = nil
    ) async throws(ManagedSessionError) -> ManagedSession {
        let id = state.withLock { $0.machine.makeID() }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<ManagedSession, any Error>) in
                    let waiter = SessionWaiter(
                        id: id,
                        minimumValidity: minimumValidity,
                        continuation: continuation,
                        rejectedAccessToken: rejectedAccessToken
                    )
                    input { machine, now in machine.request(waiter, now: now) }
                    if Task.isCancelled { cancelWaiter(id) }
                }
            } onCancel: {
                cancelWaiter(id)
            }
        } catch let error as ManagedSessionError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    private func cancelWaiter(_ id: UInt64) {
        input { machine, _ in machine.cancel(waiter: id) }
    }

    // MARK: - Inputs and effects

    /// Runs one machine step under the lock, then its effects and the events it queued.
    private func input(_ step: (inout ManagedSessionMachine, Date) -> [ManagerEffect]) {
        let now = clock.now
        let effects = state.withLock { step(&$0.machine, now) }
        perform(effects)
        drainOutbox()
    }

    /// Runs `effects` in order, then publishes the queued events, and only then resumes the
    /// callers the effects answer: a caller whose wait ends finds the handle already told.
    private func perform(_ effects: [ManagerEffect]) {
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
                if case .success = result {
                    retryPendingRevocationsInBackground()
                }
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
                    disarmed?.task.cancel()
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
    private func drainOutbox() {
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

    // MARK: - Timers

    private func schedule(
        _ slot: TaskSlot,
        after delay: TimeInterval,
        _ body: @escaping @Sendable (ManagedSessionProvider) -> Void
    ) {
        schedule(slot, at: clock.now.addingTimeInterval(max(0, delay)), body)
    }

    private func schedule(
        _ slot: TaskSlot,
        at date: Date,
        decision: UInt64? = nil,
        _ body: @escaping @Sendable (ManagedSessionProvider) -> Void
    ) {
        let clock = clock
        let id = state.withLock { state in
            state.lastTaskID += 1
            return state.lastTaskID
        }
        let task = Task { [weak self] in
            var isCancelled = false
            do {
                try await clock.sleep(until: date)
            } catch {
                isCancelled = true
            }
            guard let self else { return }
            if !isCancelled && !Task.isCancelled {
                body(self)
            }
            taskEnded(slot, id: id)
        }
        let replaced = state.withLock { state -> ScheduledTask? in
            if let decision {
                guard decision > state.lastTimerDecision else {
                    // An older decision performed late: the timer a later one armed stands.
                    state.tasksEndedEarly.remove(id)
                    return ScheduledTask(id: id, task: task, deadline: date)
                }
                state.lastTimerDecision = decision
            }
            // A task that ended before it was recorded is not recorded.
            if id < state.lastRecordedTaskID[slot, default: 0] {
                // A newer schedule of this slot was recorded first: this one is already replaced.
                state.tasksEndedEarly.remove(id)
                return ScheduledTask(id: id, task: task, deadline: date)
            }
            state.lastRecordedTaskID[slot] = id
            if state.tasksEndedEarly.remove(id) != nil { return state.tasks.removeValue(forKey: slot) }
            return state.tasks.updateValue(ScheduledTask(id: id, task: task, deadline: date), forKey: slot)
        }
        replaced?.task.cancel()
    }

    private func taskEnded(_ slot: TaskSlot, id: UInt64) {
        let now = clock.now
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.tasks[slot]?.id == id {
                state.tasks[slot] = nil
            } else if id > state.lastRecordedTaskID[slot, default: 0] {
                // It ended before `schedule` recorded it: `schedule` must not record it.
                state.tasksEndedEarly.insert(id)
            }
            return state.takeIdleWaiters(now: now)
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Refresh

    enum RefreshOutcome {
        case committed([ManagerEffect], orphaned: String?)
        case failed(ManagedSessionError)
        /// The session is over. `removesStore` is false when the store holds someone else's
        /// session (another process signed out or in); `orphaned` is a refresh token obtained
        /// for nothing, to revoke.
        case terminal(ManagedSessionError, removesStore: Bool, orphaned: String?)
        /// A sign-out or sign-in happened meanwhile; tokens obtained for nothing are revoked.
        case stale(orphaned: String?)
    }

    private func startRefresh(_ flight: RefreshFlight) {
        beginOperation()
        // The refresh runs on a thread of its own: it takes the store's exclusive access (a
        // blocking lock, across processes for a file store) twice, each time for microseconds,
        // and waits for the server in between with nothing held.
        let thread = Thread { [self] in
            withBackgroundTask("AuthSessionKit.refresh") { time in
                let start = clock.now
                instrumentation.delivery.send(.refreshStarted(isLaunch: flight.isLaunch))
                let outcome = runRefresh(flight, time: time)
                reportRefresh(flight, outcome, since: start)
                finish(flight, outcome)
            }
            endOperation()
        }
        thread.name = "AuthSessionKit.refresh"
        thread.start()
    }

    private func isCurrent(_ flight: RefreshFlight) -> Bool {
        state.withLock { $0.machine.isCurrent(flight) }
    }

    /// The refresh: claim (a short exclusive access: adopt, sign out, wait for another process's
    /// lease, or record this one's), present the refresh token with nothing held, then commit (a
    /// short exclusive access: compare, save, clear the lease). The machine decides each step.
    ///
    /// Once the system's background time has run out (`time`), it takes the store's exclusive
    /// access no more: a process suspended while it holds a file lock in a shared container is
    /// killed. A refresh not yet presented fails as the store being unavailable (the next
    /// activation refreshes); rotated tokens that arrive after it are kept unsaved, written at the
    /// next activation; its lease is left to lapse.
    private func runRefresh(_ flight: RefreshFlight, time: BackgroundTime) -> RefreshOutcome {
        let owner = leaseOwner
        while true {
            var claimedAtUptime: TimeInterval = 0
            if time.hasExpired {
                return .failed(.storage(BackgroundTime.expiredError))
            }
            guard let noticesSeen = state.withLock({ $0.machine.isCurrent(flight) ? $0.noticeCount : nil }) else {
                return .stale(orphaned: nil)
            }
            let claim: RefreshClaim
            do {
                claim = try store.withExclusiveAccess { () throws -> RefreshClaim in
                    var found = try snapshot()
                    var claim = state.withLock {
                        $0.machine.claim(flight, found: found, owner: owner, now: clock.now, uptime: clock.uptime)
                    }
                    if claim == .writeBack {
                        // This process still has the session, so it writes it back rather than
                        // reading the gap as a sign-out. Under the write lock, and only if no
                        // sign-out or sign-in committed since: a signed-out session is never
                        // written back.
                        let written = writeLock.withLock { _ -> Result<Bool, SessionStoreError> in
                            guard isCurrent(flight) else { return .success(false) }
                            do throws(SessionStoreError) {
                                try store.save(flight.session)
                            } catch {
                                return .failure(error)
                            }
                            return .success(true)
                        }
                        guard try written.get() else { return .stale }
                        found.stored = .session(flight.session)
                        claim = state.withLock {
                            $0.machine.claim(flight, found: found, owner: owner, now: clock.now, uptime: clock.uptime)
                        }
                    }
                    if case .present(let lease) = claim {
                        claimedAtUptime = clock.uptime
                        try store.saveLease(lease)
                        // From here until the token leaves, an expiry may give the lease back.
                        state.withLock { $0.unsentLeases[flight.id] = UnsentLease(lease) }
                    }
                    return claim
                }
            } catch {
                return .failed(
                    .storage(Self.storeError(error))
                )
            }
            switch claim {
            case .stale, .writeBack:
                return .stale(orphaned: nil)
            case .adopt(let stored):
                return commitAdopted(flight, stored)
            case .signedOutElsewhere:
                return .terminal(.signedOutElsewhere, removesStore: false, orphaned: nil)
            case .wait(let deadline):
                instrumentation.counters(for: flight.id).waitedForLease()
                waitForLease(of: flight, until: deadline, noticesSeen: noticesSeen)
            case .present(let lease):
                let window = configuration.sendingWindow(of: lease, claimedAtUptime: claimedAtUptime, clock: clock)
                return present(flight, lease: lease, window: window, time: time)
            }
        }
    }

    /// What the store holds, and its lease, for a refresh's claim (inside exclusive access).
    private func snapshot() throws(SessionStoreError) -> StoreSnapshot {
        let stored = try loadForCompare()
        let lease = try store.loadLease()
        return StoreSnapshot(stored: stored, lease: lease, isLeaseOwnerRunning: lease?.owner.mayBeRunning ?? false)
    }

    /// Waits, with nothing held, until the store changes (a notice), `deadline` comes, or the
    /// flight ends (a sign-out). Without notices, it looks again every 250 ms; with them, every
    /// 2 s at the latest, in case one was missed.
    private func waitForLease(of flight: RefreshFlight, until deadline: Date, noticesSeen: UInt64) {
        let wake = DispatchSemaphore(value: 0)
        let registered = state.withLock { state -> UInt64? in
            // A notice since the claim read the store: claim again at once.
            guard state.noticeCount == noticesSeen, state.machine.isCurrent(flight) else { return nil }
            state.lastLeaseWaiterID += 1
            state.leaseWaiters[state.lastLeaseWaiterID] = wake
            return state.lastLeaseWaiterID
        }
        guard let registered else { return }
        let clock = clock
        let look = min(deadline, clock.now.addingTimeInterval(store.changeNotifier == nil ? 0.25 : 2))
        let timer = Task.detached {
            try? await clock.sleep(until: look)
            wake.signal()
        }
        wake.wait()
        timer.cancel()
        state.withLock { _ = $0.leaseWaiters.removeValue(forKey: registered) }
    }

    /// Wakes the refreshes waiting for another process's lease: the store changed, or a sign-out
    /// or sign-in ended their flight.
    private func wakeLeaseWaiters(afterNotice: Bool) {
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            if afterNotice { state.noticeCount &+= 1 }
            return Array(state.leaseWaiters.values)
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Presents the refresh token under `lease`, with nothing held, then commits.
    private func present(
        _ flight: RefreshFlight,
        lease: RefreshLease,
        window: RefreshSendingWindow,
        time: BackgroundTime
    ) -> RefreshOutcome {
        // An expiry that came since the claim gave the lease back: nothing is sent under it.
        let unsent = state.withLock { $0.unsentLeases.removeValue(forKey: flight.id) } ?? UnsentLease(lease)
        guard let refreshToken = flight.session.refreshToken else {
            if unsent.startPresenting() { clearLease(lease) }
            return .failed(.refreshUnavailable)
        }
        let counters = instrumentation.counters(for: flight.id)
        let mayPresent = unsent.startPresenting() && !time.hasExpired
        guard mayPresent else {
            return .failed(.storage(BackgroundTime.expiredError))
        }
        let answer = presentOnce(
            refreshToken,
            cutoff: configuration.exchangeCutoff(of: lease),
            window: window,
            counters: counters
        )
        if time.hasExpired {
            // No store access any more: the lease lapses by itself, rotated tokens stay unsaved.
            switch answer {
            case .success(let tokens):
                let refreshed = makeSession(
                    from: tokens,
                    now: clock.now,
                    previous: flight.session,
                    knownUser: flight.session.user
                )
                return writeLock.withLock { _ in
                    commitUnsaved(flight, refreshed, writeError: BackgroundTime.expiredError)
                }
            case .failure(let error):
                return .failed(.remote(error))
            }
        }
        switch answer {
        case .failure(let error):
            guard error.kind == .terminal else {
                clearLease(lease)
                return .failed(.remote(error))
            }
            let stored = clearLease(lease, reading: true)
            if let adopted = state.withLock({ $0.machine.sessionToAdopt(afterTerminal: flight, stored: stored) }) {
                return commitAdopted(flight, adopted)
            }
            let cause = flight.verdict.map(ManagedSessionError.credentialRevoked) ?? .remote(error)
            return .terminal(cause, removesStore: true, orphaned: nil)
        case .success(let tokens):
            let expected = flight.session.user.identifier
            // A subject the client could not verify serves here only, to refuse; it is never stored.
            if let subject = tokens.user?.identifier ?? tokens.unverifiedSubject, !expected.isEmpty,
                subject != expected
            {
                // OpenID Connect: a refresh's ID token names the session's user. Another user's
                // tokens are revoked, never used; this session's refresh token is spent, so the
                // session ends.
                clearLease(lease)
                let mismatch = IDTokenValidationError.subjectMismatch(expected: expected, actual: subject)
                return .terminal(
                    .remote(RemoteAuthError(.invalidIDToken(mismatch))),
                    removesStore: true,
                    orphaned: tokens.refreshToken ?? tokens.accessToken
                )
            }
            let refreshed = makeSession(
                from: tokens,
                now: clock.now,
                previous: flight.session,
                knownUser: flight.session.user
            )
            return commitRefreshed(flight, refreshed, lease: lease)
        }
    }

    /// Removes `lease` from the store if it is still the one recorded (another process may have
    /// taken it over after its deadline); with `reading`, also returns the stored session.
    @discardableResult
    private func clearLease(_ lease: RefreshLease, reading: Bool = false) -> ManagedSession? {
        try? store.withExclusiveAccess { () -> ManagedSession? in
            if (try? store.loadLease()) == lease {
                try? store.saveLease(nil)
            }
            return reading ? (try? store.load()) ?? nil : nil
        } ?? nil
    }

    /// Presents `refreshToken`, retrying only failures the server did not act on, and blocks the
    /// calling thread (the refresh's own) until the answer, or until `cutoff`: a little before the
    /// lease lapses the exchange is abandoned, as a timeout whose outcome is unknown. No attempt
    /// starts, and (through the package's transport) no request leaves, once `window` closed: a
    /// process stopped inside its exchange past its lease and then resumed does not send a
    /// refresh token another process may have presented since.
    private func presentOnce(
        _ refreshToken: String,
        cutoff: Date,
        window: RefreshSendingWindow,
        counters: RefreshCounters
    ) -> Result<IssuedTokens, RemoteAuthError> {
        let answer = ConcurrencySafeContainer<Result<IssuedTokens, RemoteAuthError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let remote = remote
        let policy = retryPolicy
        let clock = clock
        let scope = configuration.refreshScope
        let exchange = Task.detached {
            let result = await RefreshSendingWindow.$current.withValue(window) {
                () async -> Result<IssuedTokens, RemoteAuthError> in
                do throws(RemoteAuthError) {
                    return .success(
                        try await policy.run(clock: clock, isIdempotent: false) { _ throws(RemoteAuthError) in
                            guard window.isOpen else { throw RemoteAuthError(.timedOut) }
                            counters.attempted()
                            return try await remote.refresh(refreshToken, scope: scope)
                        }
                    )
                } catch {
                    return .failure(error.presenting(grantType: "refresh_token"))
                }
            }
            let isFirst = answer.withLock { answer in
                defer { if answer == nil { answer = result } }
                return answer == nil
            }
            if isFirst { done.signal() }
        }
        let watchdog = Task.detached {
            do {
                try await clock.sleep(until: cutoff)
            } catch {
                return
            }
            let isFirst = answer.withLock { answer in
                defer { if answer == nil { answer = .failure(RemoteAuthError(.timedOut)) } }
                return answer == nil
            }
            if isFirst {
                exchange.cancel()
                done.signal()
            }
        }
        done.wait()
        watchdog.cancel()
        return answer.withLock { $0 } ?? .failure(RemoteAuthError(.cancelled))
    }

    /// Commits `stored`, the rotation (or same-person sign-in) another process made, if the flight
    /// is still current. The runtime session's biometric setting is kept.
    private func commitAdopted(_ flight: RefreshFlight, _ stored: ManagedSession) -> RefreshOutcome {
        writeLock.withLock { _ in
            guard let current = state.withLock({ $0.machine.isCurrent(flight) ? $0.machine.session : nil }) else {
                return .stale(orphaned: nil)
            }
            var adopted = stored
            adopted.isBiometricAuthenticationEnabled = current.isBiometricAuthenticationEnabled
            let now = clock.now
            let effects = state.withLock {
                $0.machine.refreshed(flight, to: adopted, isUnsaved: false, writeError: nil, now: now)
            }
            return .committed(effects, orphaned: nil)
        }
    }

    /// Inside a short exclusive access: compares the store with what the refresh started from,
    /// saves `refreshed` (or adopts what another process stored), clears the lease, and commits.
    /// If the store cannot be read or written, the rotated session is committed unsaved (its
    /// refresh token is spent: the new one must not be lost) and its write retried.
    private func commitRefreshed(
        _ flight: RefreshFlight,
        _ refreshed: ManagedSession,
        lease: RefreshLease
    ) -> RefreshOutcome {
        let outcome: RefreshOutcome?
        do {
            outcome = try store.withExclusiveAccess { () -> RefreshOutcome in
                defer {
                    if (try? store.loadLease()) == lease { try? store.saveLease(nil) }
                }
                return writeLock.withLock { _ in
                    let found: StoreSnapshot.Stored
                    do throws(SessionStoreError) {
                        found = try loadForCompare()
                    } catch {
                        return commitUnsaved(flight, refreshed, writeError: error)
                    }
                    switch state.withLock({ $0.machine.commitPlan(flight, refreshed: refreshed, found: found) }) {
                    case .stale(let orphaned):
                        return .stale(orphaned: orphaned)
                    case .signedOutElsewhere(let orphaned):
                        return .terminal(.signedOutElsewhere, removesStore: false, orphaned: orphaned)
                    case .adopt(let stored, let orphaned):
                        let now = clock.now
                        let effects = state.withLock {
                            $0.machine.refreshed(flight, to: stored, isUnsaved: false, writeError: nil, now: now)
                        }
                        return .committed(effects, orphaned: orphaned)
                    case .save(let session):
                        do throws(SessionStoreError) {
                            try store.save(session)
                        } catch {
                            return commitUnsaved(flight, session, writeError: error)
                        }
                        let now = clock.now
                        let effects = state.withLock {
                            $0.machine.refreshed(flight, to: session, isUnsaved: false, writeError: nil, now: now)
                        }
                        return .committed(effects, orphaned: nil)
                    }
                }
            }
        } catch {
            outcome = nil
        }
        if let outcome { return outcome }
        // Exclusive access itself failed: keep the rotated tokens, unsaved.
        return writeLock.withLock { _ in
            commitUnsaved(flight, refreshed, writeError: .unavailable(reason: "exclusive access failed"))
        }
    }

    /// Commits a rotated session the store could not take (called under the write lock).
    private func commitUnsaved(
        _ flight: RefreshFlight,
        _ refreshed: ManagedSession,
        writeError: SessionStoreError
    ) -> RefreshOutcome {
        guard let current = state.withLock({ $0.machine.isCurrent(flight) ? $0.machine.session : nil }) else {
            return .stale(orphaned: refreshed.refreshToken)
        }
        var refreshed = refreshed
        refreshed.isBiometricAuthenticationEnabled = current.isBiometricAuthenticationEnabled
        let now = clock.now
        let effects = state.withLock {
            $0.machine.refreshed(flight, to: refreshed, isUnsaved: true, writeError: writeError, now: now)
        }
        return .committed(effects, orphaned: nil)
    }

    private func finish(_ flight: RefreshFlight, _ outcome: RefreshOutcome) {
        switch outcome {
        case .committed(let effects, let orphaned):
            perform(effects)
            drainOutbox()
            if let orphaned {
                revokeInBackground(orphaned, kind: .refreshToken)
            }
        case .failed(let error):
            input { machine, now in machine.refreshFailed(flight, error: error, now: now) }
        case .terminal(let error, let removesStore, let orphaned):
            // Only the session this refresh was about is removed: if the store holds another
            // (another process rotated it, or signed in), that one stays.
            // Either token of this session: the one the flight presented, or the older one the
            // store held while a write was pending (a retried write may have landed since).
            let ours = Set([flight.session.refreshToken, flight.storedRefreshToken].compactMap { $0 })
            _ = performSignOut(
                error: error,
                reason: error,
                ifGeneration: flight.generation,
                revokes: false,
                removing: removesStore ? .refreshTokens(ours) : .nothing
            )
            if let orphaned {
                revokeInBackground(orphaned, kind: .refreshToken)
            }
        case .stale(let orphaned):
            if let orphaned {
                revokeInBackground(orphaned, kind: .refreshToken)
            }
        }
    }

    /// Writes the rotated session whose write failed, if the store still holds the tokens it
    /// replaced; adopts what another process wrote meanwhile (same user), or signs out (someone
    /// else's session, or none). On a thread of its own: it takes the store's exclusive access.
    private func rewrite(generation: UInt64) {
        beginOperation()
        let thread = Thread { [self] in
            var effects: [ManagerEffect] = []
            withBackgroundTask("AuthSessionKit.rewrite") { time in
                guard !time.hasExpired else {
                    // No time to take the store's access: the next activation writes it.
                    effects = state.withLock {
                        $0.machine.rewritten(generation: generation, error: BackgroundTime.expiredError)
                    }
                    return
                }
                do {
                    effects = try store.withExclusiveAccess { () -> [ManagerEffect] in
                        writeLock.withLock { _ in compareAndRewrite(generation: generation) }
                    }
                } catch {
                    let storeError = Self.storeError(error)
                    effects = state.withLock { $0.machine.rewritten(generation: generation, error: storeError) }
                }
            }
            perform(effects)
            drainOutbox()
            endOperation()
        }
        thread.name = "AuthSessionKit.rewrite"
        thread.start()
    }

    /// A load for a compare, made inside the store's exclusive access.
    private func loadForCompare() throws(SessionStoreError) -> StoreSnapshot.Stored {
        do throws(SessionStoreError) {
            return .session(try usable(store.load()))
        } catch .corrupt {
            return .unreadable
        } catch .issuedToAnotherClient {
            // Another configuration's session (an extension set up for another client signed
            // in): none of this manager's, so this one's is no longer stored; it is left alone.
            return .session(nil)
        }
    }

    /// Writes the runtime session back over unreadable bytes the store set aside, on a thread of
    /// its own (it takes the store's exclusive access), if the store still holds nothing readable
    /// and the session is still the one of `generation`: a session another process wrote back
    /// first, or signed in, is what a later notice brings; a removal (a sign-out elsewhere) is not
    /// undone.
    private func writeBack(generation: UInt64) {
        beginOperation()
        let thread = Thread { [self] in
            withBackgroundTask("AuthSessionKit.writeBack") { time in
                guard !time.hasExpired else { return }
                _ = try? store.withExclusiveAccess {
                    writeLock.withLock { _ in
                        guard
                            let session = state.withLock({
                                $0.machine.generation == generation ? $0.machine.session : nil
                            }),
                            case .unreadable? = try? loadForCompare()
                        else { return }
                        do throws(SessionStoreError) {
                            try store.save(session)
                        } catch {
                            let reported = AuthSessionError.sessionFetchFailed(
                                error: ManagedSessionError.storage(error)
                            )
                            state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
                        }
                    }
                }
            }
            drainOutbox()
            endOperation()
        }
        thread.name = "AuthSessionKit.writeBack"
        thread.start()
    }

    private func compareAndRewrite(generation: UInt64) -> [ManagerEffect] {
        guard
            let (unsaved, over) = state.withLock({ state in
                state.machine.generation == generation && state.machine.isSessionUnsaved
                    ? state.machine.session.map { ($0, state.machine.unsavedOver) } : nil
            })
        else { return [] }
        do throws(SessionStoreError) {
            let stored: ManagedSession?
            switch try loadForCompare() {
            case .unreadable:
                // Bytes that are no session, set aside by the store: the pending session is the
                // one to keep, and is written.
                try store.save(unsaved)
                return state.withLock { $0.machine.rewritten(generation: generation, error: nil) }
            case .session(let session):
                stored = session
            }
            if stored?.refreshToken == over {
                try store.save(unsaved)
                return state.withLock { $0.machine.rewritten(generation: generation, error: nil) }
            }
            if let stored, stored.isSameIdentity(as: unsaved) {
                return state.withLock { $0.machine.adopted(stored, generation: generation) }
            }
            return [.signOut(error: .signedOutElsewhere, generation: generation)]
        } catch {
            return state.withLock { $0.machine.rewritten(generation: generation, error: error) }
        }
    }

    /// Removes the stored session a sign-out could not remove (the store was locked or busy), if it
    /// is still that sign-in's and nobody signed in since, inside the store's exclusive access (so
    /// that no other process's compare-and-save interleaves). Returns at once if another process
    /// holds the access: the next activation, or the sign-out's own worker, tries again.
    private func removePendingSession() {
        guard state.withLock({ $0.machine.session == nil && $0.pendingRemoval != nil }) else { return }
        let attempt = try? store.withExclusiveAccessIfAvailable {
            writeLock.withLock { _ in removePendingSessionLocked() }
        }
        if attempt == nil {
            // The access is held (or cannot be tried): a worker waits for it.
            removePendingSessionWhenAvailable(revoking: nil)
        }
    }

    /// The removal, inside the store's exclusive access and the write lock.
    ///
    /// - Returns: The stored session removed, if any.
    @discardableResult
    private func removePendingSessionLocked(reportsFailure: Bool = false) -> ManagedSession? {
        guard let pending = state.withLock({ $0.machine.session == nil ? $0.pendingRemoval : nil }) else { return nil }
        do throws(SessionStoreError) {
            var removed: ManagedSession?
            if let stored = try store.load(), pending.matches(stored) {
                try store.remove()
                removed = stored
            }
            state.withLock { $0.pendingRemoval = nil }
            return removed
        } catch .corrupt {
            state.withLock { $0.pendingRemoval = nil }
        } catch {
            // Still locked: the next activation tries again. The sign-out that deferred it reports
            // the failure (once).
            if reportsFailure {
                let reported = AuthSessionError.signingOutFailure(error: ManagedSessionError.storage(error))
                state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
            }
        }
        return nil
    }

    // MARK: - Change notices

    /// The store changed (a notice from any process sharing it, this one included): wakes the
    /// refreshes waiting for a lease, then reads the store under the write lock (so none of this
    /// process's own writes is half done) and lets the machine decide: sign out, adopt, or nothing.
    private func storeChanged() {
        let effects: [ManagerEffect] = writeLock.withLock { _ in
            let found: StoreSnapshot.Stored
            do throws(SessionStoreError) {
                found = try loadForCompare()
            } catch {
                // Unreadable now (a locked device): the next notice or refresh looks again.
                return []
            }
            let now = clock.now
            return state.withLock { $0.machine.storeChanged(found, now: now) }
        }
        // After the machine's step: a refresh it ended (the rotation was adopted) leaves at once.
        // A refresh still waiting claims again unless the lease it waits for still stands (the
        // notice was that lease being recorded): a lease cleared without a rotation (its owner
        // failed) is this refresh's turn.
        if let flight = state.withLock({ $0.leaseWaiters.isEmpty ? nil : $0.machine.flight }),
            let lease = try? store.loadLease(),
            state.withLock({
                $0.machine.leaseRemaining(lease, for: flight, owner: leaseOwner, now: clock.now, uptime: clock.uptime)
                    != nil
            })
        {
            perform(effects)
            drainOutbox()
            return
        }
        wakeLeaseWaiters(afterNotice: true)
        perform(effects)
        drainOutbox()
    }

    // MARK: - Sign-out, credential state, revocation

    /// Signs out if `ifGeneration` (when given) is still current: the runtime session, then the
    /// store (unless `removing` says it holds another session), then the event; then, if
    /// `revokes`, the backend.
    ///
    /// The store's part runs inside its exclusive access, so that a process sharing the store
    /// cannot write its own commit over the removal. The call never waits for that access: when
    /// another process holds it (for microseconds, or suspended there), this process signs out at
    /// once and a thread of its own removes the stored session when the access is released.
    ///
    /// - Returns: The store's error, if the stored session could not be removed now.
    private func performSignOut(
        error: (any Error)?,
        reason: ManagedSessionError?,
        ifGeneration: UInt64?,
        revokes: Bool,
        removing: StoredSessionRemoval = .thisUser
    ) -> SessionStoreError? {
        // Rendered now, outside every lock, while the session's tokens are still registered for
        // redaction: the stream and the observer print this text, never the error anew.
        let cause = SignOutCause(error: error)
        let step = { (removesNow: Bool) in
            self.writeLock.withLock { _ in
                self.signOutLocked(
                    error: error,
                    cause: cause,
                    reason: reason,
                    ifGeneration: ifGeneration,
                    removing: removing,
                    removesNow: removesNow
                )
            }
        }
        var outcome: SignOutOutcome?
        var isDeferred = false
        do {
            if let attempt = try store.withExclusiveAccessIfAvailable({ step(true) }) {
                outcome = attempt
            } else {
                outcome = step(false)
                isDeferred = true
            }
        } catch {
            // The store's exclusive access itself failed (its lock file cannot be opened): the
            // removal is tried without it.
            outcome = step(true)
        }
        guard let outcome else { return nil }
        // A refresh waiting for another process's lease ended with this generation.
        wakeLeaseWaiters(afterNotice: false)
        perform(outcome.effects)
        drainOutbox()
        if isDeferred {
            removePendingSessionWhenAvailable(revoking: revokes ? outcome.ended?.refreshToken : nil)
        }
        if revokes, let ended = outcome.ended {
            if let refreshToken = ended.refreshToken {
                revokeInBackground(refreshToken, kind: .refreshToken)
            } else {
                revokeInBackground(ended.accessToken, kind: .accessToken)
            }
            // The store held a rotation this process had not adopted yet: its tokens go too.
            if let removed = outcome.removed, let token = removed.refreshToken, token != ended.refreshToken {
                revokeInBackground(token, kind: .refreshToken)
            }
        }
        return outcome.removeError
    }

    /// What a sign-out did.
    private struct SignOutOutcome {
        let ended: ManagedSession?
        /// The stored session it removed, if any.
        let removed: ManagedSession?
        let effects: [ManagerEffect]
        let removeError: SessionStoreError?
    }

    /// The sign-out's steps under the write lock (and, when `removesNow`, inside the store's
    /// exclusive access): the machine's sign-out, the store's removal (or its record, for later),
    /// the events.
    private func signOutLocked(
        error: (any Error)?,
        cause: SignOutCause,
        reason: ManagedSessionError?,
        ifGeneration: UInt64?,
        removing: StoredSessionRemoval,
        removesNow: Bool
    ) -> SignOutOutcome? {
        let plan = state.withLock {
            state -> (ended: ManagedSession?, unsavedOver: String?, owed: PendingRemoval?, effects: [ManagerEffect])? in
            if let ifGeneration, ifGeneration != state.machine.generation { return nil }
            let unsavedOver = state.machine.isSessionUnsaved ? state.machine.unsavedOver : nil
            // With no session here, what this sign-out still owes the store: before the launch
            // read it, whatever is stored; after, only a removal an earlier sign-out could not
            // make yet.
            let owed = state.machine.phase == .ready ? state.pendingRemoval : .anySession
            let plan = state.machine.signOut(error: reason)
            return (plan.ended, unsavedOver, owed, plan.effects)
        }
        guard let plan else { return nil }
        let pending: PendingRemoval?
        switch removing {
        case .thisUser:
            // The stored session goes if it descends from this sign-in (its lineage: the tokens
            // another process rotated it to included), or holds its tokens; a session another
            // process signed in since stays. A sign-out with no session here removes nothing once
            // the store was read (signed out already: what is stored now is a sign-in made since,
            // someone else's); before the launch read it (not started, or waiting for a locked
            // store) it removes whatever is stored, the session this process would have restored.
            pending = plan.ended.map { PendingRemoval.sessionOf($0, alsoHolding: plan.unsavedOver) } ?? plan.owed
        case .endedSession:
            // The tokens it ended, or the ones the store still holds while a write of their
            // rotation is pending.
            let tokens = [plan.ended?.accessToken, plan.ended?.refreshToken, plan.unsavedOver]
            pending = .tokens(Set(tokens.compactMap { $0 }))
        case .refreshTokens(let tokens):
            pending = .tokens(tokens)
        case .nothing:
            pending = nil
        }
        var removeError: SessionStoreError?
        var removed: ManagedSession?
        if removesNow {
            do throws(SessionStoreError) {
                if let pending, let stored = try store.load(), pending.matches(stored) {
                    try store.remove()
                    removed = stored
                }
                state.withLock { $0.pendingRemoval = nil }
            } catch .corrupt {
                // Bytes that are no session: no token of this session is readable there. The
                // store keeps them (set aside, or for a later set-aside), and never hands them
                // out as a session.
                state.withLock { $0.pendingRemoval = nil }
            } catch {
                removeError = error
                state.withLock { $0.pendingRemoval = pending }
            }
        } else {
            state.withLock { $0.pendingRemoval = pending }
        }
        state.withLock { state in
            let signOut = QueuedSignOut(cause: cause, endedSession: plan.ended != nil)
            state.signOuts.queue(signOut, behind: state.machine.outbox.filter(SignOutLedger.isSignOut).count)
            state.machine.outbox.append(.sessionSignedOut(error: error))
            if let removeError {
                let reported = AuthSessionError.signingOutFailure(error: ManagedSessionError.storage(removeError))
                state.machine.outbox.append(.unexpectedError(reported))
            }
        }
        return SignOutOutcome(ended: plan.ended, removed: removed, effects: plan.effects, removeError: removeError)
    }

    /// Removes the pending stored session on a thread of its own, waiting for the store's
    /// exclusive access (another process holds it now); revokes the removed session's refresh
    /// token if it is not `revoking`'s own session's (a rotation this process had not adopted).
    /// One such worker at a time.
    private func removePendingSessionWhenAvailable(revoking ended: String?) {
        let starts = state.withLock { state -> Bool in
            defer { state.isRemovalWorkerRunning = true }
            return !state.isRemovalWorkerRunning
        }
        guard starts else { return }
        beginOperation()
        let thread = Thread { [self] in
            withBackgroundTask("AuthSessionKit.signOut") { _ in
                var removed: ManagedSession?
                do {
                    removed = try store.withExclusiveAccess {
                        writeLock.withLock { _ in removePendingSessionLocked(reportsFailure: ended != nil) }
                    }
                } catch {
                    let reported = AuthSessionError.signingOutFailure(
                        error: ManagedSessionError.storage(
                            Self.storeError(error)
                        )
                    )
                    state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
                }
                state.withLock { $0.isRemovalWorkerRunning = false }
                drainOutbox()
                if let ended, let token = removed?.refreshToken, token != ended {
                    revokeInBackground(token, kind: .refreshToken)
                }
            }
            endOperation()
        }
        thread.name = "AuthSessionKit.signOut"
        thread.start()
    }

    /// What a store's exclusive access threw, as the store's error.
    private static func storeError(_ error: any Error) -> SessionStoreError {
        (error as? SessionStoreError) ?? .unavailable(reason: "exclusive access failed")
    }

    /// The system's time ran out: the leases of refreshes that have not sent their token yet are
    /// given back (nothing will be sent under them), each in an exclusive access of the store
    /// taken only if it is free at once (never a wait: the process is about to be suspended).
    /// A lease whose token may have left stays until it lapses: giving it back could let another
    /// process present the same, possibly spent, refresh token.
    func giveBackUnsentLeases() {
        let abandoned = state.withLock { state -> [RefreshLease] in
            state.unsentLeases.values.compactMap { $0.abandon() ? $0.lease : nil }
        }
        for lease in abandoned {
            _ = try? store.withExclusiveAccessIfAvailable {
                if (try? store.loadLease()) == lease { try? store.saveLease(nil) }
            }
        }
    }

    /// Makes `time` the background refresh's: work begun from now on stops taking the store's
    /// access once it expires.
    func beginBackgroundRefresh(_ time: BackgroundTime) {
        state.withLock { $0.backgroundRefreshTime = time }
    }

    /// Ends `time`'s hold on work begun from now on, if it is still the background refresh's.
    func endBackgroundRefresh(_ time: BackgroundTime) {
        state.withLock { state in
            if state.backgroundRefreshTime === time { state.backgroundRefreshTime = nil }
        }
    }

    /// When the session's token is due for a refresh (its expiry less the margin), if there is
    /// a session and a refresh token.
    var nextRefreshDate: Date? {
        state.withLock { state in
            guard let session = state.machine.session, session.refreshToken != nil else { return nil }
            let date = session.expiresAt - configuration.margin(for: session)
            return date.isFinite ? Date(timeIntervalSince1970: date) : nil
        }
    }

    /// Runs `body` inside the configured background-task assertion, if any, with what tells it the
    /// system's time ran out.
    private func withBackgroundTask<Result>(_ name: String, _ body: (BackgroundTime) -> Result) -> Result {
        let time = BackgroundTime(within: state.withLock { $0.backgroundRefreshTime })
        let token = configuration.backgroundTask?.begin(name) { [weak self] in
            time.expire()
            self?.giveBackUnsentLeases()
        }
        defer { token?.end() }
        return body(time)
    }

    private func checkCredential(_ session: ManagedSession, generation: UInt64) {
        beginOperation()
        let remote = remote
        // Weak: a verdict for a manager the app released starts nothing (a confirming refresh,
        // a sign-out).
        Task { [weak self] in
            let result: Result<CredentialState, RemoteAuthError>
            do throws(RemoteAuthError) {
                result = .success(try await remote.credentialState(for: session))
            } catch {
                result = .failure(error)
            }
            guard let self else { return }
            instrumentation.delivery.send(.credentialChecked(result))
            input { machine, _ in machine.credentialChecked(result, of: session, generation: generation) }
            endOperation()
        }
    }

    /// Whether `error` is the store refusing what it found (permissions, owner, a link, not a
    /// file): nothing a retry or a sign-in mends; the app or the person must.
    /// `stored`, if this manager's backend may use it: a session that records an origin the
    /// backend's is not compatible with is ``SessionStoreError/issuedToAnotherClient(stored:configured:)``.
    private func usable(_ stored: ManagedSession?) throws(SessionStoreError) -> ManagedSession? {
        if let stored, let recorded = stored.origin, let configured = remote.sessionOrigin,
            !recorded.isCompatible(with: configured)
        {
            throw .issuedToAnotherClient(stored: recorded, configured: configured)
        }
        return stored
    }

    /// Whether something issued to `recorded` may be sent with a backend configured for
    /// `configured`: compatible origins, or either unknown.
    static func isOurs(_ recorded: SessionOrigin?, configured: SessionOrigin?) -> Bool {
        guard let recorded, let configured else { return true }
        return recorded.isCompatible(with: configured)
    }

    static func isRefusal(_ error: SessionStoreError) -> Bool {
        switch error {
        case .insecurePermissions, .foreignOwner, .symbolicLink, .notARegularFile: true
        default: false
        }
    }

    private func revokeInBackground(_ token: String, kind: TokenKind) {
        beginOperation()
        let remote = remote
        Task { [self] in
            do throws(RemoteAuthError) {
                try await remote.revoke(token, kind: kind)
                instrumentation.delivery.send(.revocation(kind, .revoked(isRetry: false)))
            } catch  where error.kind == .transient {
                instrumentation.delivery.send(.revocation(kind, .pending(error)))
                if kind == .refreshToken {
                    let now = clock.now.timeIntervalSince1970
                    let record = PendingRevocation(
                        token: token,
                        kind: kind,
                        recordedAt: now,
                        notAfter: now + configuration.pendingRevocationLifetime,
                        origin: remote.sessionOrigin
                    )
                    await onOwnThread { [self] in keepPendingRevocation(record) }
                }
            } catch {
                instrumentation.delivery.send(.revocation(kind, .failed(error)))
            }
            endOperation()
        }
    }

    /// Records `record` with the store's pending revocations (inside its exclusive access), and
    /// in memory for a store that keeps none. Blocks: call it on a thread of its own.
    private func keepPendingRevocation(_ record: PendingRevocation) {
        state.withLock { state in
            if !state.pendingRevocations.contains(where: { $0.token == record.token }) {
                state.pendingRevocations.append(record)
            }
        }
        _ = try? store.withExclusiveAccess {
            var kept = try store.loadPendingRevocations()
            guard !kept.contains(where: { $0.token == record.token }) else { return }
            kept.append(record)
            try store.savePendingRevocations(kept)
        }
    }

    /// Makes again the revocations that could not reach the server before, by this process or
    /// another sharing the store (a sign-out while offline, say): each is made once now, and
    /// removed when the server revoked the token or refused for good; one still unreachable
    /// stays for the next try (the next launch or activation, or another call of this method).
    /// One kept until its token could no longer be valid is given up. Each outcome is reported
    /// to the observers (``ManagedSessionObservation/revocation(_:_:)``).
    ///
    /// The manager calls it by itself after the launch read the store and at each activation; a
    /// command-line tool that signed out offline calls it (or waits for it with
    /// ``waitUntilIdle()``) before it exits to know where things stand.
    ///
    /// - Returns: How many revocations are still pending.
    @discardableResult
    public func revokePendingTokens() async -> Int {
        await revocationRound().value
    }

    /// The round of pending revocations running now, or a new one: one at a time, and a caller
    /// that comes while one runs waits for that one. Counted as an operation from its start, so
    /// that ``waitUntilIdle()`` waits for it.
    private func revocationRound() -> Task<Int, Never> {
        state.withLock { locked -> Task<Int, Never> in
            if let running = locked.revocationRound { return running }
            beginOperationLocked(&locked)
            let round = Task { [self] in
                let remaining = await makePendingRevocations()
                state.withLock { $0.revocationRound = nil }
                endOperation()
                return remaining
            }
            locked.revocationRound = round
            return round
        }
    }

    /// One round of ``revokePendingTokens()``.
    private func makePendingRevocations() async -> Int {
        let now = clock.now.timeIntervalSince1970
        let (due, expired) = await onOwnThread { [self] in takeDueRevocations(now: now) }
        for record in expired {
            instrumentation.delivery.send(.revocation(record.kind, .expired))
        }
        // A token issued to another client or server is left for a manager configured for it
        // (another app of the group, the next version): sent here, it would be refused, or
        // handed to a server that never issued it.
        let origin = remote.sessionOrigin
        for record in due where Self.isOurs(record.origin, configured: origin) {
            do throws(RemoteAuthError) {
                try await remote.revoke(record.token, kind: record.kind)
                instrumentation.delivery.send(.revocation(record.kind, .revoked(isRetry: true)))
                await onOwnThread { [self] in forgetPendingRevocation(record.token) }
            } catch  where error.kind == .transient {
                instrumentation.delivery.send(.revocation(record.kind, .pending(error)))
            } catch {
                instrumentation.delivery.send(.revocation(record.kind, .failed(error)))
                await onOwnThread { [self] in forgetPendingRevocation(record.token) }
            }
        }
        return await onOwnThread { [self] in pendingRevocationsNow().count }
    }

    /// The pending revocations, from the store and memory; expired ones removed (and returned).
    private func takeDueRevocations(now: TimeInterval) -> (due: [PendingRevocation], expired: [PendingRevocation]) {
        let inMemory = state.withLock { $0.pendingRevocations }
        // A look first, without the exclusive access: with nothing pending (nearly always) the
        // round takes no turn at the store.
        let peeked = (try? store.loadPendingRevocations()) ?? []
        guard !peeked.isEmpty || !inMemory.isEmpty else { return ([], []) }
        let stored =
            (try? store.withExclusiveAccess { () throws -> [PendingRevocation] in
                let kept = try store.loadPendingRevocations()
                let live = kept.filter { $0.notAfter > now }
                if live.count != kept.count { try store.savePendingRevocations(live) }
                return kept
            }) ?? []
        var all: [PendingRevocation] = []
        for record in stored + inMemory where !all.contains(where: { $0.token == record.token }) {
            all.append(record)
        }
        state.withLock { $0.pendingRevocations.removeAll { $0.notAfter <= now } }
        return (all.filter { $0.notAfter > now }, all.filter { $0.notAfter <= now })
    }

    /// Removes the pending revocation of `token`, from the store and memory.
    private func forgetPendingRevocation(_ token: String) {
        state.withLock { $0.pendingRevocations.removeAll { $0.token == token } }
        _ = try? store.withExclusiveAccess {
            let kept = try store.loadPendingRevocations()
            let rest = kept.filter { $0.token != token }
            if rest.count != kept.count { try store.savePendingRevocations(rest) }
        }
    }

    /// The pending revocations now, from the store and memory.
    private func pendingRevocationsNow() -> [PendingRevocation] {
        let inMemory = state.withLock { $0.pendingRevocations }
        // A read: the store replaces its record whole.
        let stored = (try? store.loadPendingRevocations()) ?? []
        var all: [PendingRevocation] = []
        for record in stored + inMemory where !all.contains(where: { $0.token == record.token }) {
            all.append(record)
        }
        return all
    }

    /// After the launch read the store, and at each activation: the revocations put off before
    /// are made again, in the background (not by a read-only process: the app makes them).
    private func retryPendingRevocationsInBackground() {
        guard configuration.role == .full else { return }
        _ = revocationRound()
    }

    private func beginOperation() {
        state.withLock { beginOperationLocked(&$0) }
    }

    private func beginOperationLocked(_ state: inout ProviderState) {
        state.runningOperations += 1
    }

    private func endOperation() {
        let now = clock.now
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.runningOperations -= 1
            return state.takeIdleWaiters(now: now)
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Sessions from tokens

    /// A session from issued tokens: a refresh keeps what the server did not send again (the
    /// refresh token of a non-rotating server, the ID token, the scope, profile fields); a
    /// sign-in merges profile fields from the last known user with the same subject (rule 7).
    private func makeSession(
        from tokens: IssuedTokens,
        now: Date,
        previous: ManagedSession?,
        knownUser: ManagedUser?
    ) -> ManagedSession {
        let issued = tokens.user ?? previous?.user ?? ManagedUser(identifier: "")
        let user = knownUser.map { Self.merge(issued, over: $0) } ?? issued
        let lifetime = tokens.expiresIn ?? configuration.assumedTokenLifetime
        return ManagedSession(
            accessToken: tokens.accessToken,
            refreshToken: tokens.refreshToken ?? previous?.refreshToken,
            idToken: tokens.idToken ?? previous?.idToken,
            tokenType: tokens.tokenType,
            scope: tokens.scope?.joined(separator: " ") ?? previous?.scope,
            expiresAt: now.timeIntervalSince1970 + lifetime,
            issuedAt: now.timeIntervalSince1970,
            user: user,
            isBiometricAuthenticationEnabled: previous?.isBiometricAuthenticationEnabled ?? false,
            // A sign-in starts a lineage; a refresh keeps its session's.
            lineage: previous == nil ? ManagedSession.newLineage() : previous?.lineage,
            // Where the tokens came from: this backend's (a session stored before the package
            // recorded it gains it with its first refresh here).
            origin: previous?.origin ?? remote.sessionOrigin
        )
    }

    /// `new` with the fields it lacks taken from `known`, when both are the same subject.
    static func merge(_ new: ManagedUser, over known: ManagedUser) -> ManagedUser {
        guard new.identifier == known.identifier else { return new }
        return ManagedUser(
            identifier: new.identifier,
            name: new.name ?? known.name,
            email: new.email ?? known.email,
            profile: known.profile.merging(new.profile) { _, newer in newer }
        )
    }
}

/// The background tasks a manager keeps, one per slot: arming one cancels the one before.
private enum TaskSlot: Hashable {
    case refresh
    case storage
    case rewrite
}

/// Everything mutable in a manager, behind one lock.
private struct ProviderState {
    var machine: ManagedSessionMachine
    weak var proxy: (any AuthSessionEventProxy)?
    var isDraining = false
    /// The sign-outs this provider queued, as they were decided (their rendered causes).
    var signOuts = SignOutLedger()
    var tasks: [TaskSlot: ScheduledTask] = [:]
    var lastTaskID: UInt64 = 0
    /// Tasks whose body ended before they were recorded in `tasks`.
    var tasksEndedEarly: Set<UInt64> = []
    /// The newest task recorded per slot: a task with an older ID that ends was replaced.
    var lastRecordedTaskID: [TaskSlot: UInt64] = [:]
    /// The newest machine decision applied to the refresh timer, and to the redaction.
    var lastTimerDecision: UInt64 = 0
    var lastRedactionDecision: UInt64 = 0
    /// The stored session a sign-out could not remove (a locked store): removed at the next
    /// activation.
    var pendingRemoval: PendingRemoval?
    /// Whether the launch found the store refusing itself (its file open to other users, another
    /// user's, a link): a sign-in then checks it first.
    var storeRefusedItself = false
    /// Revocations that could not reach the server, for a store that keeps none.
    var pendingRevocations: [PendingRevocation] = []
    /// The round of pending revocations running now, if one is.
    var revocationRound: Task<Int, Never>?
    var observations: [AppActivationObservation] = []
    var registrations: [SecretRegistration] = []
    var runningOperations = 0
    /// Callers of ``ManagedSessionProvider/waitUntilIdle()`` and
    /// ``ManagedSessionProvider/waitUntilLaunchSettled()``.
    var idleWaiters: [IdleWaiter] = []
    /// The store's change notices heard so far: a refresh that read the store before the latest
    /// one claims again instead of waiting.
    var noticeCount: UInt64 = 0
    /// Refreshes waiting for another process's lease, woken by a notice or a sign-out.
    var leaseWaiters: [UInt64: DispatchSemaphore] = [:]
    var lastLeaseWaiterID: UInt64 = 0
    /// The observation of the store's change notices.
    var noticeObservation: SessionChangeObservation?
    /// The biometric setting last asked for while the store's exclusive access was held, and
    /// whether a worker is storing settings: later calls queue behind it, the last one wins.
    var pendingBiometricSetting: (isEnabled: Bool, generation: UInt64)?
    var isBiometricWorkerRunning = false
    /// A thread is trying to store a setting without waiting: others queue behind it.
    var isBiometricWriteInProgress = false
    /// Whether a worker waits for the store's exclusive access to remove a signed-out session.
    var isRemovalWorkerRunning = false
    /// The time of the background refresh the app runs (`BGAppRefreshTask`): work begun while it
    /// runs stops taking the store's access once it expires. Cleared at the next activation.
    var backgroundRefreshTime: BackgroundTime?
    /// The leases recorded by refreshes that have not sent their token yet, by flight.
    var unsentLeases: [UInt64: UnsentLease] = [:]
}

/// A lease a refresh recorded, before its token leaves: either the refresh starts presenting
/// under it, or an expiry abandons it (and gives it back); never both.
final class UnsentLease: Sendable {

    private enum Phase {
        case recorded
        case presenting
        case abandoned
    }

    /// The lease.
    let lease: RefreshLease
    private let phase = ConcurrencySafeContainer(Phase.recorded)

    init(_ lease: RefreshLease) {
        self.lease = lease
    }

    /// The refresh is about to send its token: `false` if an expiry abandoned the lease first.
    func startPresenting() -> Bool {
        phase.withLock { phase in
            guard phase == .recorded else { return false }
            phase = .presenting
            return true
        }
    }

    /// An expiry: `true` if the token has not left (the lease may be given back).
    func abandon() -> Bool {
        phase.withLock { phase in
            guard phase == .recorded else { return false }
            phase = .abandoned
            return true
        }
    }
}

extension ProviderState {

    /// Nothing running, no timer due and yet to run, no thread publishing events; and, if
    /// `launched`, the launch has read the store (and its refresh, which runs, has ended).
    func isIdle(now: Date, launched: Bool = false) -> Bool {
        runningOperations == 0 && !isDraining && !tasks.values.contains { $0.deadline <= now }
            && (!launched || machine.hasLaunched)
    }

    /// The idle waiters to resume, if idle now (those waiting for the launch, if it settled).
    mutating func takeIdleWaiters(now: Date) -> [CheckedContinuation<Void, Never>] {
        guard isIdle(now: now) else { return [] }
        let hasLaunched = machine.hasLaunched
        var resumed: [CheckedContinuation<Void, Never>] = []
        idleWaiters.removeAll { waiter in
            guard hasLaunched || !waiter.requiresLaunch else { return false }
            resumed.append(waiter.continuation)
            return true
        }
        return resumed
    }
}

/// A caller waiting for the manager to be idle, and for its launch to have settled.
struct IdleWaiter {
    let requiresLaunch: Bool
    let continuation: CheckedContinuation<Void, Never>
}

/// A timer task and when it is due.
private struct ScheduledTask {
    let id: UInt64
    let task: Task<Void, Never>
    let deadline: Date
}

/// Which stored session a sign-out removes.
private enum StoredSessionRemoval {
    /// The signed-out user's, whichever tokens it holds (an explicit sign-out); whatever is
    /// stored when no session was loaded.
    case thisUser
    /// Only the session the sign-out ended, recognised by its tokens (the manager's own
    /// sign-outs: the same user signed in again by another process keeps that session).
    case endedSession
    /// Only a session holding one of these refresh tokens (a terminal refresh answer).
    case refreshTokens(Set<String>)
    /// None: the store holds another process's session, or none.
    case nothing
}

/// Which stored session a sign-out removes, or still has to remove.
private enum PendingRemoval {
    /// The one descending from a sign-in: its lineage (or, for a session stored before lineages,
    /// its subject), or one holding any of its tokens.
    case session(subject: String, lineage: String?, tokens: Set<String>)
    /// Whatever is stored: the sign-out came before the launch read the store (not started, or
    /// waiting for a locked store).
    case anySession
    /// A session holding one of these access or refresh tokens.
    case tokens(Set<String>)

    static func sessionOf(_ ended: ManagedSession, alsoHolding unsavedOver: String?) -> PendingRemoval {
        let tokens = [ended.accessToken, ended.refreshToken, unsavedOver].compactMap { $0 }
        return .session(subject: ended.user.identifier, lineage: ended.lineage, tokens: Set(tokens))
    }

    func matches(_ stored: ManagedSession) -> Bool {
        switch self {
        case .session(let subject, let lineage, let tokens):
            if tokens.contains(stored.accessToken) || stored.refreshToken.map(tokens.contains) == true { return true }
            if let lineage { return stored.lineage == lineage }
            // A session stored before lineages: only another such session of the same subject
            // (a sign-in made since has a lineage, and is not this one).
            return stored.lineage == nil && !subject.isEmpty && stored.user.identifier == subject
        case .anySession:
            return true
        case .tokens(let tokens):
            return tokens.contains(stored.accessToken) || stored.refreshToken.map(tokens.contains) == true
        }
    }
}

/// Whether the system's background time for the work in progress has run out: set by the
/// ``BackgroundTaskAssertion``'s expiry, read before each exclusive access of the store.
final class BackgroundTime: Sendable {

    /// Why a store access was not made: the time ran out.
    static let expiredError = SessionStoreError.unavailable(reason: "the system's background time ran out")

    private let expired = ConcurrencySafeContainer(false)
    /// The time this one is part of (a background refresh's), whose expiry is this one's too.
    private let outer: BackgroundTime?

    /// Creates a time that runs out when ``expire()`` is called, or when `outer` runs out.
    init(within outer: BackgroundTime? = nil) {
        self.outer = outer
    }

    /// Whether the time ran out.
    var hasExpired: Bool { expired.withLock { $0 } || outer?.hasExpired == true }

    /// The time ran out.
    func expire() {
        expired.withLock { $0 = true }
    }
}
