// Over 600 lines on purpose: the whole of the manager's decisions, as one pure state machine
// (no I/O, no clock of its own). Its rules meet in every step (generations, the refresh in
// flight, the callers waiting, the unsaved session), and they are read together; the shell that
// performs its effects is split by concern (ManagedSessionProvider+*.swift).

import AuthSessionInterface
import Foundation

/// A caller waiting for a session: `validAccessToken`, `refresh()`, or a caller that came before
/// the launch finished.
struct SessionWaiter {
    let id: UInt64
    /// The validity the caller needs; `nil` forces a refresh (an explicit `refresh()`).
    let minimumValidity: TimeInterval?
    let continuation: CheckedContinuation<ManagedSession, any Error>
    /// An access token a server rejected: while it is still the session's, the caller needs a
    /// refresh; once it is not, the caller needs only `minimumValidity`
    /// (``ManagedSessionProvider/refresh(ifAccessTokenIs:minimumValidity:)``).
    var rejectedAccessToken: String? = nil
}

/// A refresh that failed transiently, and until when a rejection of its access token fails with
/// its error (the automatic retry's backoff).
struct FailedRefresh {
    /// The access token the refresh was to replace.
    let accessToken: String
    let error: ManagedSessionError
    let retryAt: Date
}

/// The one refresh in flight.
struct RefreshFlight: Sendable {
    let id: UInt64
    /// The generation it started in: its result counts only if the generation is still current.
    let generation: UInt64
    /// The session whose refresh token it presents.
    let session: ManagedSession
    /// Whether the store does not hold `session` (its write failed after a rotation): the store's
    /// older tokens must then not be adopted.
    let sessionIsUnsaved: Bool
    /// Whether this is the launch's refresh: its end publishes the initial fetch.
    let isLaunch: Bool
    /// The credential state that asked for this refresh to confirm it, if any: a terminal answer
    /// then signs out with ``ManagedSessionError/credentialRevoked(_:)``.
    var verdict: CredentialState? = nil
    /// The refresh token the store holds for this session (an older one while unsaved).
    var storedRefreshToken: String? = nil
}

/// What a store holds, read inside its exclusive access (or, for a change notice, under the
/// manager's write lock), for the machine to decide on.
struct StoreSnapshot {
    enum Stored {
        /// The stored session, or `nil` for none.
        case session(ManagedSession?)
        /// Bytes that are no session: the store set them aside (or copied them, to set aside
        /// later). Not a sign-out: this process's session is the one to keep, and is written back.
        case unreadable
    }

    var stored: Stored
    /// The recorded refresh lease, if any.
    var lease: RefreshLease? = nil
    /// Whether the lease's owner may still be running (the shell asks the operating system).
    var isLeaseOwnerRunning = true
}

/// What a refresh does after reading the store inside its exclusive access, before the network.
enum RefreshClaim: Equatable {
    /// A sign-out or sign-in happened meanwhile: nothing to do.
    case stale
    /// The store holds bytes that are no session: write the flight's session back, then claim
    /// again.
    case writeBack
    /// Another process rotated the tokens (or the same person signed in there): commit that
    /// session, with no request.
    case adopt(ManagedSession)
    /// The store holds no session, or another person's: this process signs out.
    case signedOutElsewhere
    /// Another running process holds a live lease on this refresh token: release exclusive
    /// access and wait for its commit (a change notice) or its deadline, then claim again.
    case wait(until: Date)
    /// Record this lease, release exclusive access, present the refresh token.
    case present(RefreshLease)
}

/// What a refresh whose answer came back does with it, inside the store's exclusive access.
enum RefreshCommit: Equatable {
    /// A sign-out or sign-in happened meanwhile; tokens obtained for nothing are revoked.
    case stale(orphaned: String?)
    /// Save this session, then commit it.
    case save(ManagedSession)
    /// The same person signed in again (or another process rotated) meanwhile: commit the stored
    /// session, and revoke the tokens this refresh obtained for nothing.
    case adopt(ManagedSession, orphaned: String?)
    /// The store holds no session or another person's: sign out, revoke what this refresh got.
    case signedOutElsewhere(orphaned: String?)
}

/// What the shell does after a machine step, outside the lock.
enum ManagerEffect {
    /// Load the store (the launch), then feed ``ManagedSessionMachine/loaded(_:generation:now:)``.
    case load(generation: UInt64)
    /// Load again after `delay` (the store was unavailable).
    case reloadLater(generation: UInt64, delay: TimeInterval)
    /// Run the refresh.
    case refresh(RefreshFlight)
    /// Ask the backend for the credential's state.
    case checkCredential(ManagedSession, generation: UInt64)
    /// Sleep until `date`, then feed ``ManagedSessionMachine/timerFired(generation:now:)``;
    /// `nil` cancels the timer. `decision` orders it: an older decision never replaces a newer.
    case armTimer(Date?, generation: UInt64, decision: UInt64)
    /// Write the runtime session again after `delay` (a write failed after a rotation).
    case rewriteLater(generation: UInt64, delay: TimeInterval)
    /// Resume waiters.
    case resume([SessionWaiter], Result<ManagedSession, ManagedSessionError>)
    /// Register the runtime session's tokens for redaction (or none). `decision` orders it.
    case redact(ManagedSession?, decision: UInt64)
    /// Sign out, with the generation the decision was made in.
    case signOut(error: ManagedSessionError, generation: UInt64)
    /// Write the runtime session back over bytes the store found unreadable and set aside, if the
    /// store still holds nothing readable.
    case writeBack(generation: UInt64)
}

/// The session manager's rules as a value type: no locks, no I/O, no clock reads. Each input
/// returns the effects to perform; events to publish go to ``outbox`` in order.
///
/// The store is written by the shell *before* the input that commits the result, so nothing
/// reaches the runtime session or an event that is not stored (except a rotation whose write
/// failed: the old refresh token is spent, so the new tokens are kept and the write retried).
struct ManagedSessionMachine {

    enum Phase: Equatable {
        case notStarted
        case loading
        case waitingForStorage(retry: Int)
        case ready
    }

    let configuration: ManagedSessionProvider.Configuration

    private(set) var phase = Phase.notStarted
    /// Bumped by every sign-out and every committed sign-in.
    private(set) var generation: UInt64 = 0
    /// The runtime session: what ``ManagedSessionProvider/session`` returns.
    private(set) var session: ManagedSession?
    /// Whether the store lacks ``session`` (a write after a rotation failed).
    private(set) var isSessionUnsaved = false
    private(set) var flight: RefreshFlight?
    private var flightWaiters: [SessionWaiter] = []
    /// Callers that came before the launch finished.
    private var pendingWaiters: [SessionWaiter] = []
    /// A misconfiguration the last refresh met: not retried until a sign-in, a launch or an
    /// explicit refresh.
    private(set) var blockingError: RemoteAuthError?
    private var lastCredentialCheck: Date?
    private var isCheckingCredential = false
    private var rewriteAttempt = 0
    /// The user last seen, to merge profile fields a backend sends only once.
    private(set) var lastKnownUser: ManagedUser?
    private var nextID: UInt64 = 0
    /// Orders the effects that replace state outside the machine (the timer, the redaction), so
    /// that one performed late never undoes a later decision.
    private var decisions: UInt64 = 0
    /// Transient failures of automatic refreshes in a row, for the retry timer's backoff.
    private var transientFailures = 0
    /// The last refresh's transient failure, while its backoff runs: a rejection of the access
    /// token it could not replace fails with it instead of starting another refresh.
    private var failedRefresh: FailedRefresh?
    /// The refresh token the store still holds while ``isSessionUnsaved``: a retried write may
    /// replace only that.
    private(set) var unsavedOver: String?
    /// The shortest time between a token's issue and its automatic refresh: a server that issues
    /// tokens with no lifetime does not get a refresh loop.
    static let minimumRefreshInterval: TimeInterval = 10
    /// Events to publish, in order.
    var outbox: [AuthSessionEvent] = [] {
        // Each event is stamped with the runtime session as it is when the event is queued (the
        // session stream's element); events leave from the front only (``takeEvent()``).
        didSet {
            if outbox.count > outboxSessions.count {
                outboxSessions += repeatElement(session, count: outbox.count - outboxSessions.count)
            } else if outbox.count < outboxSessions.count {
                outboxSessions.removeFirst(outboxSessions.count - outbox.count)
            }
        }
    }
    /// The runtime session when each event of ``outbox`` was queued.
    private var outboxSessions: [ManagedSession?] = []

    /// Whether a credential verdict signs out at once, unconfirmed (the remote's
    /// `credentialStateIsFinal`).
    let verdictsAreFinal: Bool

    init(configuration: ManagedSessionProvider.Configuration, verdictsAreFinal: Bool = false) {
        self.configuration = configuration
        self.verdictsAreFinal = verdictsAreFinal
    }

    /// The next event to publish, with the runtime session as it was when it was queued.
    mutating func takeEvent() -> (event: AuthSessionEvent, session: ManagedSession?)? {
        guard let session = outboxSessions.first else { return nil }
        return (outbox.removeFirst(), session)
    }

    mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    private mutating func redact(_ session: ManagedSession?) -> ManagerEffect {
        decisions += 1
        return .redact(session, decision: decisions)
    }

    private mutating func disarm() -> ManagerEffect {
        decisions += 1
        return .armTimer(nil, generation: generation, decision: decisions)
    }

    private mutating func arm(at date: Date) -> ManagerEffect {
        decisions += 1
        return .armTimer(date, generation: generation, decision: decisions)
    }

    // MARK: - Reading

    /// How many callers wait for a refresh or for the launch.
    var waitingCallerCount: Int { flightWaiters.count + pendingWaiters.count }

    /// The access token if it is valid for `minimumValidity` more seconds and no refresh is
    /// forced; the cheap path of `validAccessToken`.
    func validToken(minimumValidity: TimeInterval, now: Date) -> String? {
        isFresh(minimumValidity: minimumValidity, now: now) ? session?.accessToken : nil
    }

    /// The session, when its access token stays valid `minimumValidity` more seconds and the
    /// launch is over: ``validToken(minimumValidity:now:)`` with the session the token is of.
    func validSession(minimumValidity: TimeInterval, now: Date) -> ManagedSession? {
        isFresh(minimumValidity: minimumValidity, now: now) ? session : nil
    }

    /// Whether the launch is over and the session's access token stays valid `minimumValidity`
    /// more seconds.
    private func isFresh(minimumValidity: TimeInterval, now: Date) -> Bool {
        // The fields are read in place: binding the session would copy it, retaining every one of
        // its strings, on the path every API call takes.
        guard phase == .ready, let expiresAt = session?.expiresAt, let issuedAt = session?.issuedAt else {
            return false
        }
        return Self.isValid(expiresAt: expiresAt, issuedAt: issuedAt, for: minimumValidity, now: now)
    }

    /// Whether `session`'s access token stays valid `minimumValidity` more seconds. A caller
    /// cannot ask for more than half the lifetime the server grants: otherwise every call would
    /// refresh (a refresh storm), since no token the server issues could satisfy it.
    private func isValid(_ session: ManagedSession, for minimumValidity: TimeInterval, now: Date) -> Bool {
        Self.isValid(expiresAt: session.expiresAt, issuedAt: session.issuedAt, for: minimumValidity, now: now)
    }

    private static func isValid(
        expiresAt: TimeInterval,
        issuedAt: TimeInterval,
        for minimumValidity: TimeInterval,
        now: Date
    ) -> Bool {
        let remaining = expiresAt - now.timeIntervalSince1970
        let lifetime = expiresAt - issuedAt
        let needed = lifetime.isFinite && lifetime > 0 ? min(minimumValidity, lifetime / 2) : minimumValidity
        return remaining.isFinite && remaining > 0 && remaining >= needed
    }

    private func isDue(_ session: ManagedSession, now: Date) -> Bool {
        let remaining = session.expiresAt - now.timeIntervalSince1970
        return !(remaining.isFinite && remaining > configuration.margin(for: session))
    }

    private func refreshDate(of session: ManagedSession) -> Date? {
        let date = session.expiresAt - configuration.margin(for: session)
        return date.isFinite ? Date(timeIntervalSince1970: date) : nil
    }

    // MARK: - Launch (rule 1)

    /// Whether the launch read the store (or found it unavailable, and waits to read it again),
    /// or a sign-in or sign-out made it moot.
    var hasLaunched: Bool {
        switch phase {
        case .notStarted, .loading: false
        case .waitingForStorage, .ready: true
        }
    }

    mutating func launch() -> [ManagerEffect] {
        if phase == .ready {
            // Used before a handle existed (a sign-in, say): the handle learns the session now.
            outbox.append(.sessionFetched(isInitialFetch: true))
            return []
        }
        guard phase == .notStarted else { return [] }
        phase = .loading
        outbox.append(.fetchingSession)
        return [.load(generation: generation)]
    }

    /// The store answered the launch's load.
    mutating func loaded(
        _ result: Result<ManagedSession?, SessionStoreError>,
        generation loadGeneration: UInt64,
        now: Date
    ) -> [ManagerEffect] {
        guard loadGeneration == generation else { return [] }
        let retry: Int
        switch phase {
        case .loading: retry = 0
        case .waitingForStorage(let count): retry = count
        case .notStarted, .ready: return []
        }
        switch result {
        case .failure(.unavailable):
            // A locked device: keep loading, never sign out, never delete.
            phase = .waitingForStorage(retry: retry + 1)
            let delay = min(
                configuration.maximumStorageRetryInterval,
                configuration.storageRetryInterval * pow(2, Double(min(retry, 30)))
            )
            return [.reloadLater(generation: generation, delay: delay)]
        case .failure(let error):
            phase = .ready
            let reported = ManagedSessionError.storage(error)
            if case .corrupt = error {
                // The bytes were set aside by the store; the user is signed out with the cause.
                outbox.append(.sessionSignedOut(error: reported))
            } else {
                // The store refuses (permissions, a newer format, I/O): nothing was changed; the
                // handle sees no session and the error.
                outbox.append(.sessionFetchFailed(reported))
            }
            return failPending(.notSignedIn)
        case .success(nil):
            phase = .ready
            outbox.append(.sessionFetched(isInitialFetch: true))
            return failPending(.notSignedIn)
        case .success(let stored?):
            phase = .ready
            session = stored
            lastKnownUser = stored.user
            var effects: [ManagerEffect] = [redact(stored)]
            if isDue(stored, now: now), configuration.role == .full {
                if stored.refreshToken != nil {
                    // Refreshed before the initial fetch is published: no flash of an expired
                    // session, and the handle keeps showing "loading" meanwhile.
                    effects += startFlight(isLaunch: true)
                    return effects
                }
                if !isValid(stored, for: 0, now: now) {
                    effects.append(.signOut(error: .refreshUnavailable, generation: generation))
                    return effects
                }
            }
            outbox.append(.sessionFetched(isInitialFetch: true))
            effects += armTimer()
            effects += credentialCheck(now: now, force: true)
            effects += servePending(now: now)
            return effects
        }
    }

    // MARK: - Token requests (rules 3 and 10)

    /// A caller wants a session valid for `minimumValidity` seconds, or (`nil`) a refresh.
    mutating func request(_ waiter: SessionWaiter, now: Date) -> [ManagerEffect] {
        guard phase == .ready else {
            pendingWaiters.append(waiter)
            return []
        }
        guard let session else { return [.resume([waiter], .failure(.notSignedIn))] }
        if session.refreshToken == nil, !isValid(session, for: 0, now: now) {
            // Spent, and nothing to refresh it with: the session is over.
            return [
                .resume([waiter], .failure(.refreshUnavailable)),
                .signOut(error: .refreshUnavailable, generation: generation),
            ]
        }
        // A token a server rejected needs a refresh while it is still the session's; once it is not
        // (a refresh committed meanwhile), the caller retries with the session's: no second refresh.
        let isRejected = waiter.rejectedAccessToken != nil && waiter.rejectedAccessToken == session.accessToken
        if !isRejected, let minimumValidity = waiter.minimumValidity,
            isValid(session, for: minimumValidity, now: now)
        {
            return [.resume([waiter], .success(session))]
        }
        if flight != nil {
            flightWaiters.append(waiter)
            return []
        }
        if waiter.minimumValidity == nil {
            blockingError = nil
        } else if let blockingError {
            // A rejected token does not clear it either: a burst of rejections would otherwise
            // retry a misconfigured refresh once each.
            return [.resume([waiter], .failure(.remote(blockingError)))]
        }
        if isRejected, waiter.minimumValidity != nil, let failedRefresh,
            failedRefresh.accessToken == session.accessToken, now < failedRefresh.retryAt
        {
            // The refresh of this very token failed moments ago and its backoff runs: waves of
            // rejections during an outage do not hammer the token endpoint.
            return [.resume([waiter], .failure(failedRefresh.error))]
        }
        guard session.refreshToken != nil else {
            // Nothing to refresh with: the token as it is while it lasts, then a new sign-in.
            return isValid(session, for: 0, now: now) && !isRejected
                ? [.resume([waiter], .success(session))] : [.resume([waiter], .failure(.refreshUnavailable))]
        }
        guard configuration.role == .full else {
            // A reader: the app renews the token, and the store's notice brings it here.
            return [.resume([waiter], .failure(.readOnly))]
        }
        flightWaiters.append(waiter)
        return startFlight(isLaunch: false)
    }

    /// The caller `id` was cancelled: it leaves; the refresh it joined goes on.
    mutating func cancel(waiter id: UInt64) -> [ManagerEffect] {
        if let index = flightWaiters.firstIndex(where: { $0.id == id }) {
            return [.resume([flightWaiters.remove(at: index)], .failure(.cancelled))]
        }
        if let index = pendingWaiters.firstIndex(where: { $0.id == id }) {
            return [.resume([pendingWaiters.remove(at: index)], .failure(.cancelled))]
        }
        return []
    }

    private mutating func startFlight(isLaunch: Bool, verdict: CredentialState? = nil) -> [ManagerEffect] {
        guard let session else { return [] }
        let flight = RefreshFlight(
            id: makeID(),
            generation: generation,
            session: session,
            sessionIsUnsaved: isSessionUnsaved,
            isLaunch: isLaunch,
            verdict: verdict,
            storedRefreshToken: isSessionUnsaved ? unsavedOver : session.refreshToken
        )
        self.flight = flight
        return [.refresh(flight)]
    }

    private mutating func servePending(now: Date) -> [ManagerEffect] {
        let waiters = pendingWaiters
        pendingWaiters = []
        return waiters.flatMap { request($0, now: now) }
    }

    private mutating func failPending(_ error: ManagedSessionError) -> [ManagerEffect] {
        let waiters = pendingWaiters
        pendingWaiters = []
        return waiters.isEmpty ? [] : [.resume(waiters, .failure(error))]
    }

    // MARK: - Refresh results (rules 4, 5, 6)

    /// Whether `flight` may still commit: it is the one in flight, in the current generation.
    func isCurrent(_ flight: RefreshFlight) -> Bool {
        self.flight?.id == flight.id && flight.generation == generation
    }

    /// The refresh succeeded, or adopted the rotation another process made. The shell has saved
    /// `refreshed` already, unless `isUnsaved` (the write failed; the old token is spent).
    mutating func refreshed(
        _ flight: RefreshFlight,
        to refreshed: ManagedSession,
        isUnsaved: Bool,
        writeError: SessionStoreError?,
        now: Date
    ) -> [ManagerEffect] {
        guard isCurrent(flight) else { return [] }
        session = refreshed
        lastKnownUser = refreshed.user
        if isUnsaved && !isSessionUnsaved {
            unsavedOver = flight.session.refreshToken
        } else if !isUnsaved {
            unsavedOver = nil
        }
        isSessionUnsaved = isUnsaved
        return endFlight(flight, with: refreshed, writeError: writeError, now: now)
    }

    /// Ends `flight` with `session`, already the runtime session: the event (the launch's fetch, or
    /// an update), the write to retry if `writeError`, the callers answered, the timer armed.
    private mutating func endFlight(
        _ flight: RefreshFlight,
        with session: ManagedSession,
        writeError: SessionStoreError?,
        now: Date
    ) -> [ManagerEffect] {
        self.flight = nil
        blockingError = nil
        transientFailures = 0
        failedRefresh = nil
        var effects: [ManagerEffect] = [redact(session)]
        if flight.isLaunch {
            outbox.append(.sessionFetched(isInitialFetch: true))
        } else {
            outbox.append(.sessionUpdated(session))
        }
        if let writeError {
            outbox.append(.unexpectedError(.sessionFetchFailed(error: ManagedSessionError.storage(writeError))))
            rewriteAttempt = 0
            effects.append(.rewriteLater(generation: generation, delay: configuration.storageRetryInterval))
        }
        effects.append(.resume(takeFlightWaiters(), .success(session)))
        effects += armTimer()
        if flight.isLaunch {
            effects += credentialCheck(now: now, force: true)
            effects += servePending(now: now)
        }
        return effects
    }

    /// The refresh failed without ending the session: transient, a misconfiguration, or the store.
    mutating func refreshFailed(_ flight: RefreshFlight, error: ManagedSessionError, now: Date) -> [ManagerEffect] {
        guard isCurrent(flight) else { return [] }
        self.flight = nil
        var effects: [ManagerEffect] = []
        if case .remote(let remote) = error, remote.kind == .misconfiguration {
            blockingError = remote
            effects.append(disarm())
        } else {
            // The session stands; the next activation or call retries, and so does a timer, with
            // backoff: 30 s, doubling up to 5 minutes.
            let delay = min(300, 30 * pow(2, Double(min(transientFailures, 10))))
            transientFailures += 1
            effects.append(arm(at: now.addingTimeInterval(delay)))
            failedRefresh = FailedRefresh(
                accessToken: flight.session.accessToken,
                error: error,
                retryAt: now.addingTimeInterval(delay)
            )
        }
        outbox.append(.sessionFetchFailed(error))
        effects.append(.resume(takeFlightWaiters(), .failure(error)))
        if flight.isLaunch {
            effects += credentialCheck(now: now, force: true)
            effects += servePending(now: now)
        }
        return effects
    }

    private mutating func takeFlightWaiters() -> [SessionWaiter] {
        defer { flightWaiters = [] }
        return flightWaiters
    }

    // MARK: - Leases (rule 3)

    /// A refresh read the store (and its lease) inside exclusive access: adopt, sign out, wait
    /// for another process's lease, or take the lease and present the refresh token.
    ///
    /// A lease blocks only while it is about the very refresh token this flight would present, is
    /// another process's, and stands (its owner may be running and its deadline is ahead). A
    /// lease of this process is one an earlier flight of its own left; a lease about another token
    /// is about a session already rotated or replaced.
    mutating func claim(
        _ flight: RefreshFlight,
        found: StoreSnapshot,
        owner: RefreshLease.Owner,
        now: Date,
        uptime: TimeInterval
    ) -> RefreshClaim {
        guard isCurrent(flight), let refreshToken = flight.session.refreshToken else { return .stale }
        let lease = RefreshLease(
            owner: owner,
            startedAt: now.timeIntervalSince1970,
            deadline: now.timeIntervalSince1970 + configuration.refreshLeaseDuration,
            refreshTokenFingerprint: RefreshLease.fingerprint(of: refreshToken)
        )
        if !flight.sessionIsUnsaved {
            // The store holds what this refresh starts from, unless another process refreshed
            // (adopt its rotation) or signed out or in.
            switch found.stored {
            case .unreadable:
                return .writeBack
            case .session(let stored?) where stored.isSameIdentity(as: flight.session):
                if stored.refreshToken != refreshToken { return .adopt(stored) }
            case .session:
                return .signedOutElsewhere
            }
        }
        if let standing = found.lease, found.isLeaseOwnerRunning,
            let remaining = leaseRemaining(standing, for: flight, owner: owner, now: now, uptime: uptime)
        {
            if leaseSighting?.lease != standing {
                leaseSighting = LeaseSighting(lease: standing, uptime: uptime)
            }
            return .wait(until: now.addingTimeInterval(remaining))
        }
        return .present(lease)
    }

    /// When this manager first saw the lease that holds its refresh back, on the clock's
    /// ``AuthSessionClock/uptime``.
    struct LeaseSighting: Equatable {
        let lease: RefreshLease
        let uptime: TimeInterval
    }

    private(set) var leaseSighting: LeaseSighting?

    /// How many more seconds `lease` keeps `flight` from presenting its refresh token, or `nil`
    /// when it does not: it must be about that token and another owner's (whether its owner still
    /// runs is the caller's to ask).
    ///
    /// One rule, the same in every process whatever its own settings or clock: a lease lasts the
    /// duration its owner recorded (`deadline - startedAt`), at most
    /// ``RefreshLease/maximumDuration``, and stands while both of these say so:
    /// - the wall clock: until `startedAt` plus that duration (a lease whose start looks in the
    ///   future, after a clock was set back, stands: its owner may be mid-exchange);
    /// - this process's own, monotonic, count (``AuthSessionClock/uptime``): no longer than that
    ///   duration after this manager first saw it, so that a clock set back, or a hostile file,
    ///   cannot make it stand longer than a lease may.
    ///
    /// A clock set forward by more than a lease's duration still makes a live lease look lapsed
    /// (the owner's exchange ends before its own cutoff, on its own monotonic time; see
    /// <doc:HonestLimits>).
    func leaseRemaining(
        _ lease: RefreshLease,
        for flight: RefreshFlight,
        owner: RefreshLease.Owner,
        now: Date,
        uptime: TimeInterval
    ) -> TimeInterval? {
        guard isCurrent(flight), lease.covers(flight.session.refreshToken), lease.owner != owner else { return nil }
        let duration = min(lease.deadline - lease.startedAt, RefreshLease.maximumDuration)
        guard duration.isFinite, duration > 0 else { return nil }
        let wallRemaining = lease.startedAt + duration - now.timeIntervalSince1970
        let seen = leaseSighting?.lease == lease ? leaseSighting?.uptime ?? uptime : uptime
        let observedRemaining = seen + duration - uptime
        let remaining = min(wallRemaining, observedRemaining)
        return remaining > 0 && remaining.isFinite ? remaining : nil
    }

    /// A refresh's answer came back with `refreshed`; the store (read inside exclusive access)
    /// holds `found`. Saves it only over what the refresh started from: a process that signed out
    /// or in meanwhile, or took over a lapsed lease and rotated, wins.
    func commitPlan(_ flight: RefreshFlight, refreshed: ManagedSession, found: StoreSnapshot.Stored) -> RefreshCommit {
        guard isCurrent(flight), let current = session else { return .stale(orphaned: refreshed.refreshToken) }
        var refreshed = refreshed
        // The biometric setting may have changed while the server answered: in this process (the
        // runtime session) or in another (the store).
        refreshed.isBiometricAuthenticationEnabled = current.isBiometricAuthenticationEnabled
        // With a write pending, the store holds the tokens it replaces, or this process's own if
        // a retried write landed.
        let startedFrom: Set<String?> =
            flight.sessionIsUnsaved
            ? [flight.storedRefreshToken, flight.session.refreshToken] : [flight.session.refreshToken]
        switch found {
        case .unreadable:
            // Bytes that are no session, set aside by the store: this refresh's session is the one
            // to keep, and is written.
            return .save(refreshed)
        case .session(let stored?) where startedFrom.contains(stored.refreshToken):
            refreshed.isBiometricAuthenticationEnabled = stored.isBiometricAuthenticationEnabled
            return .save(refreshed)
        case .session(let stored?) where stored.isSameIdentity(as: flight.session):
            return .adopt(stored, orphaned: refreshed.refreshToken)
        case .session:
            return .signedOutElsewhere(orphaned: refreshed.refreshToken)
        }
    }

    /// A refresh met a terminal answer; the store holds `stored`. The same person signed in again
    /// in a process sharing the store while this refresh was out (revoking the old tokens, say):
    /// that session is adopted instead of signing out.
    func sessionToAdopt(afterTerminal flight: RefreshFlight, stored: ManagedSession?) -> ManagedSession? {
        guard !flight.sessionIsUnsaved, let stored, stored.isSameIdentity(as: flight.session),
            stored.refreshToken != flight.session.refreshToken, stored.issuedAt >= flight.session.issuedAt
        else { return nil }
        return stored
    }

    // MARK: - Change notices (rule 3)

    /// The store changed, as a notice told: `found` is what it holds now, read under the manager's
    /// write lock (so none of this process's own writes is half done). A sign-out elsewhere signs
    /// this process out; another person's session signs it out too; the same person's rotation or
    /// new sign-in is adopted, ending a refresh that waits for it.
    mutating func storeChanged(_ found: StoreSnapshot.Stored, now: Date) -> [ManagerEffect] {
        switch phase {
        case .waitingForStorage:
            return storeMayBeAvailable()
        case .notStarted, .loading:
            return []
        case .ready:
            break
        }
        guard let session else { return [] }
        guard case .session(let stored) = found else {
            // Unreadable bytes, set aside by the store (another process read them first): not a
            // sign-out. This process's session is the one to keep, and is written back.
            return [.writeBack(generation: generation)]
        }
        if isSessionUnsaved {
            // The store holds the tokens the pending write replaces, or (it landed) this
            // process's own.
            if let stored, stored.refreshToken == unsavedOver { return [] }
            if let stored, stored.refreshToken == session.refreshToken, stored.accessToken == session.accessToken {
                isSessionUnsaved = false
                unsavedOver = nil
                return []
            }
        }
        guard let stored, stored.isSameIdentity(as: session) else {
            return [.signOut(error: .signedOutElsewhere, generation: generation)]
        }
        guard stored != session else { return [] }
        if let flight, flight.session.refreshToken == stored.refreshToken {
            // The refresh in flight presents the stored token: this is its own lease, or a write
            // of the biometric setting; its commit decides.
            return []
        }
        self.session = stored
        lastKnownUser = stored.user
        isSessionUnsaved = false
        unsavedOver = nil
        if let flight {
            // A refresh waiting for another process's lease, or one whose answer is not back yet:
            // the store's rotation is the result; the flight's own answer, if any, is orphaned.
            return endFlight(flight, with: stored, writeError: nil, now: now)
        }
        outbox.append(.sessionUpdated(stored))
        return [redact(stored)] + armTimer()
    }

    // MARK: - Sign-in and sign-out (rules 6, 7, 8)

    /// A sign-in whose tokens the shell has stored: commits it if no sign-out or other sign-in
    /// committed since `startGeneration`.
    mutating func signedIn(_ signedIn: ManagedSession, startGeneration: UInt64, now: Date) -> [ManagerEffect]? {
        guard startGeneration == generation else { return nil }
        generation += 1
        session = signedIn
        lastKnownUser = signedIn.user
        isSessionUnsaved = false
        unsavedOver = nil
        blockingError = nil
        transientFailures = 0
        failedRefresh = nil
        lastCredentialCheck = now
        isCheckingCredential = false
        phase = .ready
        let abandoned = flight
        flight = nil
        outbox.append(.sessionSignIn)
        var effects: [ManagerEffect] = [redact(signedIn)]
        if abandoned != nil {
            effects.append(.resume(takeFlightWaiters(), .failure(.superseded)))
        }
        effects += armTimer()
        effects += servePending(now: now)
        return effects
    }

    /// Starts a sign-out: the runtime session goes, a new generation begins, waiters fail. The
    /// shell then removes the stored session and publishes the event.
    ///
    /// - Returns: The session that ended, and the effects.
    mutating func signOut(
        error: ManagedSessionError?
    ) -> (ended: ManagedSession?, wasLoading: Bool, effects: [ManagerEffect]) {
        let ended = session
        let wasLoading = phase != .ready
        generation += 1
        session = nil
        isSessionUnsaved = false
        unsavedOver = nil
        blockingError = nil
        transientFailures = 0
        failedRefresh = nil
        flight = nil
        isCheckingCredential = false
        lastCredentialCheck = nil
        if phase != .ready { phase = .ready }
        var effects: [ManagerEffect] = [redact(nil), disarm()]
        let reason = error ?? .notSignedIn
        let waiters = takeFlightWaiters() + pendingWaiters
        pendingWaiters = []
        if !waiters.isEmpty {
            effects.append(.resume(waiters, .failure(reason)))
        }
        return (ended, wasLoading, effects)
    }

    /// A user to merge the next sign-in's profile with.
    func userToMerge(subject: String) -> ManagedUser? {
        // Without a subject nothing says the last user is this one.
        !subject.isEmpty && lastKnownUser?.identifier == subject ? lastKnownUser : nil
    }

    /// The biometric setting changed and the shell stored it, with the tokens the store held
    /// (another process may have rotated them).
    mutating func biometricSettingStored(_ updated: ManagedSession) -> [ManagerEffect] {
        let rotated = updated.accessToken != session?.accessToken
        session = updated
        isSessionUnsaved = false
        unsavedOver = nil
        outbox.append(.sessionUpdated(updated))
        return rotated ? [redact(updated)] + armTimer() : []
    }

    /// Another process's rotation or same-user sign-in, found in the store, becomes the runtime
    /// session (a retried write that found the store changed).
    mutating func adopted(_ stored: ManagedSession, generation adoptGeneration: UInt64) -> [ManagerEffect] {
        guard adoptGeneration == generation, session != nil else { return [] }
        lastKnownUser = stored.user
        session = stored
        isSessionUnsaved = false
        unsavedOver = nil
        outbox.append(.sessionUpdated(stored))
        return [redact(stored)] + armTimer()
    }

    /// The retried write of a rotated session succeeded (or failed again).
    mutating func rewritten(generation writeGeneration: UInt64, error: SessionStoreError?) -> [ManagerEffect] {
        guard writeGeneration == generation, isSessionUnsaved else { return [] }
        guard error != nil else {
            isSessionUnsaved = false
            unsavedOver = nil
            return []
        }
        rewriteAttempt += 1
        let delay = min(
            configuration.maximumStorageRetryInterval,
            configuration.storageRetryInterval * pow(2, Double(min(rewriteAttempt, 30)))
        )
        return [.rewriteLater(generation: generation, delay: delay)]
    }

    // MARK: - Time, activation, credential state (rules 4, 9)

    /// The timer for the runtime session: its proactive refresh (never sooner than
    /// ``minimumRefreshInterval`` after its issue), or, without a refresh token, its expiry.
    private mutating func armTimer() -> [ManagerEffect] {
        guard let session, session.expiresAt.isFinite, configuration.role == .full else { return [disarm()] }
        guard session.refreshToken != nil, let date = refreshDate(of: session) else {
            return [arm(at: Date(timeIntervalSince1970: session.expiresAt))]
        }
        let earliest = Date(timeIntervalSince1970: session.issuedAt + Self.minimumRefreshInterval)
        return [arm(at: max(date, earliest))]
    }

    /// The timer of `timerGeneration` fired: refresh if due, sign out a spent session that cannot
    /// be refreshed, or arm again for the right time.
    mutating func timerFired(generation timerGeneration: UInt64, now: Date) -> [ManagerEffect] {
        guard timerGeneration == generation, phase == .ready, let session, flight == nil else { return [] }
        if session.refreshToken == nil {
            return isValid(session, for: 0, now: now)
                ? armTimer() : [.signOut(error: .refreshUnavailable, generation: generation)]
        }
        let refresh = blockingError == nil ? refreshIfDue(now: now) : []
        return refresh.isEmpty && blockingError == nil ? armTimer() : refresh
    }

    private mutating func refreshIfDue(now: Date) -> [ManagerEffect] {
        guard phase == .ready, let session, flight == nil, blockingError == nil, session.refreshToken != nil,
            configuration.role == .full,
            isDue(session, now: now)
        else { return [] }
        return startFlight(isLaunch: false)
    }

    /// The store may be readable now (the device was unlocked, an access control authenticated):
    /// a launch waiting for it loads at once.
    mutating func storeMayBeAvailable() -> [ManagerEffect] {
        guard case .waitingForStorage = phase else { return [] }
        return [.load(generation: generation)]
    }

    /// The app became active.
    mutating func activated(now: Date) -> [ManagerEffect] {
        switch phase {
        case .waitingForStorage:
            return storeMayBeAvailable()
        case .notStarted, .loading:
            return []
        case .ready:
            var effects = refreshIfDue(now: now)
            effects += credentialCheck(now: now, force: false)
            if isSessionUnsaved {
                effects.append(.rewriteLater(generation: generation, delay: 0))
            }
            return effects
        }
    }

    private mutating func credentialCheck(now: Date, force: Bool) -> [ManagerEffect] {
        guard configuration.checksCredentialState, configuration.role == .full, let session, !isCheckingCredential
        else { return [] }
        if !force, let lastCredentialCheck,
            now.timeIntervalSince(lastCredentialCheck) < configuration.credentialCheckInterval
        {
            return []
        }
        isCheckingCredential = true
        lastCredentialCheck = now
        return [.checkCredential(session, generation: generation)]
    }

    /// The backend answered a credential check of `checked`, made in `checkGeneration`.
    ///
    /// A final verdict (the remote's `credentialStateIsFinal`: it is about the user) other than
    /// authorized signs out the same user's session, whatever its tokens are now. Any other
    /// verdict other than authorized signs out, unless it is about tokens already replaced (a
    /// refresh rotated them meanwhile: the verdict is stale), or the session has a refresh token:
    /// then the refresh token, the real authority, confirms it. A verdict on an access token that
    /// another process sharing the store rotated away, or that a refresh killed before its write
    /// left behind, is not a revocation; the confirming refresh adopts or renews, and signs out
    /// only on a terminal answer.
    mutating func credentialChecked(
        _ result: Result<CredentialState, RemoteAuthError>,
        of checked: ManagedSession,
        generation checkGeneration: UInt64
    ) -> [ManagerEffect] {
        guard checkGeneration == generation else { return [] }
        isCheckingCredential = false
        // A network error says nothing about the credential: nothing changes.
        guard case .success(let state) = result, state != .authorized, let session else { return [] }
        if verdictsAreFinal {
            // About the user, not about the tokens the check saw: a refresh that rotated them
            // meanwhile changes nothing.
            guard session.isSameIdentity(as: checked) else { return [] }
            return [.signOut(error: .credentialRevoked(state), generation: generation)]
        }
        guard session.accessToken == checked.accessToken, blockingError == nil else { return [] }
        guard session.refreshToken != nil else {
            return [.signOut(error: .credentialRevoked(state), generation: generation)]
        }
        guard flight == nil else { return [] }
        return startFlight(isLaunch: false, verdict: state)
    }
}
