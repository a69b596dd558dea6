import AuthSession
import AuthSessionInterface
import Foundation

/// Receives what a ``ManagedSessionProvider`` does, for logs and metrics: sign-ins, sign-outs,
/// refreshes (with their duration, attempts and outcome), store failures, credential checks, and
/// change notices that fell back to polling.
///
/// ```swift
/// let provider = ManagedSessionProvider(
///     store: store, remote: oauth,
///     configuration: .init(observer: StandardErrorSessionObserver())
/// )
/// ```
///
/// The manager never calls an observer on its own threads or under a lock: each observation is
/// queued and delivered on a serial queue of the manager's, one at a time, in the order the
/// manager made them. A slow observer delays only later observations (they wait in the queue,
/// without a bound), never a sign-in or a refresh. No observation carries a token, a code or a
/// password: its `description` and the adapters' lines are safe to log.
///
/// Nothing is dropped, also when the manager is released: its queued observations are still
/// delivered. Since they arrive after the call that made them returned, wait for them before
/// reading what the observer heard or before the process exits:
/// ``ManagedSessionProvider/flushObservations()`` returns once every observation made before it
/// was delivered, and ``ManagedSessionProvider/waitUntilIdle()`` and
/// ``ManagedSessionProvider/waitUntilLaunchSettled()`` end with it.
///
/// Adapters: ``StandardErrorSessionObserver`` for command-line tools, `OSLogSessionObserver`
/// (`os.Logger`, Apple platforms).
public protocol ManagedSessionObserver: Sendable {

    /// One thing the manager did. Called on the manager's observer queue, one at a time.
    ///
    /// - Parameter observation: What happened.
    func observe(_ observation: ManagedSessionObservation)
}

/// One thing a ``ManagedSessionProvider`` did, for a ``ManagedSessionObserver``.
///
/// Durations are measured on the manager's clock (``ManagedSessionProvider/clock``), in seconds.
///
/// All operations are thread-safe.
public enum ManagedSessionObservation: Sendable, CustomStringConvertible, CustomReflectable {

    /// A sign-in started, with the grant type it presents (`password`, `authorization_code`, ...).
    case signInStarted(grantType: String)

    /// A sign-in finished: `error` is `nil` when it succeeded.
    case signInFinished(grantType: String, error: ManagedSessionError?, duration: TimeInterval)

    /// The session ended (or a sign-out was asked for with nobody signed in: `wasSignedIn` is
    /// `false`). A sign-out while the launch refreshes a stored session ended that session:
    /// `wasSignedIn` is `true`. The cause's text was rendered when the sign-out was decided (see
    /// ``SignOutReason``).
    case signedOut(cause: SignOutCause, wasSignedIn: Bool)

    /// A refresh started; `isLaunch` when the launch refreshes a stored session that was due.
    case refreshStarted(isLaunch: Bool)

    /// A refresh finished.
    case refreshFinished(RefreshReport)

    /// The store failed during `activity`.
    case storeFailed(SessionStoreError, during: StoreActivity)

    /// The backend answered a credential-state check (or failed to).
    case credentialChecked(Result<CredentialState, RemoteAuthError>)

    /// The store's change notices fell back to polling (see ``SessionChangeNoticeFallback``):
    /// changes made by other processes (a sign-out, a rotation) are still heard, about a second
    /// later. Reported once per manager, when it happens; a ``Severity/warning``: a kernel limit
    /// worth raising, nothing lost.
    case changeNoticesFellBack(SessionChangeNoticeFallback)

    /// A revocation of a token this manager ended (a sign-out, a replaced session, tokens obtained
    /// for nothing) was made, put off, or given up: see ``RevocationOutcome``.
    case revocation(TokenKind, RevocationOutcome)

    /// A token answer showed the server's clock this many seconds ahead of this device's
    /// (negative: behind), measured from its `Date` header (see
    /// ``IssuedTokens/serverClockOffset``): the ID token's time claims were checked on the
    /// server's clock, and the session's expiry, a duration from now, is unchanged. Reported with
    /// each sign-in or refresh whose answer showed one; an offset of a minute or more is a
    /// ``Severity/warning`` (the device's clock is wrong: other apps and TLS may fail too).
    case serverClockOffset(TimeInterval)

    /// What became of a revocation.
    ///
    /// All operations are thread-safe.
    public enum RevocationOutcome: Sendable, Hashable, CustomStringConvertible {

        /// The server revoked the token (`isRetry`: a revocation put off earlier, by this process
        /// or another sharing the store).
        case revoked(isRetry: Bool)

        /// The server could not be reached (offline, a timeout, a server error): a refresh token's
        /// revocation is kept in the store (``PendingRevocation``) and made again at the next
        /// launch or activation, or by ``ManagedSessionProvider/revokePendingTokens()``. An access
        /// token's is not kept: it expires by itself.
        case pending(RemoteAuthError)

        /// The server refused the revocation for good (a misconfigured client, an endpoint it
        /// does not have): it is not made again. The token may stay valid until it expires.
        case failed(RemoteAuthError)

        /// A revocation kept until the token could no longer be valid was given up.
        case expired

        /// `revoked`, `pending(...)`, `failed(...)`, `expired`.
        public var description: String {
            switch self {
            case .revoked(let isRetry): isRetry ? "revoked(retry)" : "revoked"
            case .pending(let error): "pending(\(error))"
            case .failed(let error): "failed(\(error))"
            case .expired: "expired"
            }
        }
    }

    /// What a finished refresh did.
    ///
    /// All operations are thread-safe.
    public struct RefreshReport: Sendable, Hashable, CustomStringConvertible {

        /// How the refresh ended.
        public var outcome: RefreshOutcome

        /// From its start to its commit, on the manager's clock.
        public var duration: TimeInterval

        /// How many times the refresh token was presented (retries of failures the server did not
        /// act on included); 0 when another process's refresh was adopted instead.
        public var attempts: Int

        /// How many times the refresh waited for another process's lease on the same token.
        public var leaseWaits: Int

        /// Whether it was the launch's refresh of a stored session that was due.
        public var isLaunch: Bool

        /// Creates a report.
        ///
        /// - Parameters:
        ///   - outcome: How it ended.
        ///   - duration: Its duration.
        ///   - attempts: The presentations of the refresh token.
        ///   - leaseWaits: The waits for another process's lease.
        ///   - isLaunch: Whether it was the launch's.
        public init(
            outcome: RefreshOutcome,
            duration: TimeInterval,
            attempts: Int,
            leaseWaits: Int,
            isLaunch: Bool
        ) {
            self.outcome = outcome
            self.duration = duration
            self.attempts = attempts
            self.leaseWaits = leaseWaits
            self.isLaunch = isLaunch
        }

        /// `refreshed in 0.120 s, 1 attempt, 0 lease waits`.
        public var description: String {
            "\(outcome) in \(Self.seconds(duration)), \(attempts) attempt\(attempts == 1 ? "" : "s"), "
                + "\(leaseWaits) lease wait\(leaseWaits == 1 ? "" : "s")\(isLaunch ? ", at launch" : "")"
        }

        static func seconds(_ duration: TimeInterval) -> String {
            guard duration.isFinite else { return "\(duration) s" }
            return String(format: "%.3f s", duration)
        }
    }

    /// How a refresh ended.
    ///
    /// All operations are thread-safe.
    public enum RefreshOutcome: Sendable, Hashable, CustomStringConvertible {

        /// New tokens from the server, stored.
        case refreshed

        /// Another process sharing the store refreshed first; its tokens were adopted (joined).
        case adopted

        /// The refresh failed; the session stands (a transient failure, a misconfiguration, the
        /// store).
        case failed(ManagedSessionError)

        /// The refresh ended the session (the server refused the refresh token, another process
        /// signed out).
        case endedSession(ManagedSessionError)

        /// A sign-out or sign-in committed first; the refresh's result was dropped.
        case superseded

        /// The outcome's name and its error.
        public var description: String {
            switch self {
            case .refreshed: "refreshed"
            case .adopted: "adopted"
            case .failed(let error): "failed(\(error))"
            case .endedSession(let error): "endedSession(\(error))"
            case .superseded: "superseded"
            }
        }
    }

    /// What the manager was doing when its store failed.
    ///
    /// All operations are thread-safe.
    public enum StoreActivity: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {

        /// Reading the stored session at launch (a locked device gives ``SessionStoreError/unavailable(reason:)``).
        case launch

        /// Storing a new sign-in.
        case signIn

        /// Reading or writing the store around a refresh.
        case refresh

        /// Removing the stored session at a sign-out.
        case signOut

        /// Storing the biometric setting.
        case settingUpdate

        /// The name.
        public var description: String { rawValue }
    }

    /// One line, without any token: `refreshFinished(refreshed in 0.120 s, 1 attempt, ...)`.
    public var description: String {
        switch self {
        case .signInStarted(let grantType):
            "signInStarted(\(Self.clean(grantType)))"
        case .signInFinished(let grantType, let error, let duration):
            "signInFinished(\(Self.clean(grantType)), \(error.map { "failed: \($0)" } ?? "succeeded") in "
                + "\(RefreshReport.seconds(duration)))"
        case .signedOut(let cause, let wasSignedIn):
            "signedOut(\(cause)\(wasSignedIn ? "" : ", nobody was signed in"))"
        case .refreshStarted(let isLaunch):
            "refreshStarted(\(isLaunch ? "at launch" : "running"))"
        case .refreshFinished(let report):
            "refreshFinished(\(report))"
        case .storeFailed(let error, let activity):
            "storeFailed(\(activity): \(error))"
        case .credentialChecked(.success(let state)):
            "credentialChecked(\(state))"
        case .credentialChecked(.failure(let error)):
            "credentialChecked(failed: \(error))"
        case .changeNoticesFellBack(let fallback):
            "changeNoticesFellBack(\(fallback))"
        case .revocation(let kind, let outcome):
            "revocation(\(kind.rawValue), \(outcome))"
        case .serverClockOffset(let offset):
            "serverClockOffset(\(offset.isFinite ? String(format: "%+.1f s", offset) : "\(offset) s"))"
        }
    }

    /// The observation's name alone (`refreshFinished`, `storeFailed`): a fixed word that holds
    /// nothing about the person or the device, which a log may show in clear.
    public var name: String {
        switch self {
        case .signInStarted: "signInStarted"
        case .signInFinished: "signInFinished"
        case .signedOut: "signedOut"
        case .refreshStarted: "refreshStarted"
        case .refreshFinished: "refreshFinished"
        case .storeFailed: "storeFailed"
        case .credentialChecked: "credentialChecked"
        case .changeNoticesFellBack: "changeNoticesFellBack"
        case .revocation: "revocation"
        case .serverClockOffset: "serverClockOffset"
        }
    }

    /// The description only: `dump` never walks into an error.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }

    /// How serious an observation is, for a logger's level: ``Severity/error`` for failures that
    /// end a session or lose data, ``Severity/warning`` for failures the manager recovers from,
    /// ``Severity/info`` for the rest.
    public var severity: Severity {
        switch self {
        case .signInStarted, .refreshStarted: .debug
        case .signInFinished(_, let error, _): error == nil ? .info : .warning
        case .signedOut(let cause, _):
            if case .voluntary = cause { .info } else { .warning }
        case .refreshFinished(let report):
            switch report.outcome {
            case .refreshed, .adopted, .superseded: .info
            case .failed: .warning
            case .endedSession: .error
            }
        case .storeFailed(let error, _): error.problem == .storageUnavailable ? .warning : .error
        case .credentialChecked(.success(let state)): state == .authorized ? .info : .warning
        case .credentialChecked(.failure): .warning
        case .changeNoticesFellBack: .warning
        case .revocation(_, .revoked): .info
        case .revocation(_, .pending), .revocation(_, .expired): .warning
        case .revocation(_, .failed): .error
        case .serverClockOffset(let offset): abs(offset) >= 60 ? .warning : .info
        }
    }

    /// How serious an observation is.
    ///
    /// All operations are thread-safe.
    public enum Severity: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {

        /// A step in progress.
        case debug

        /// A normal outcome.
        case info

        /// A failure the manager recovers from, or a session ended for a reason.
        case warning

        /// A session ended by a failure, or the store refusing.
        case error

        /// Orders by seriousness.
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The name.
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// A grant type as sent: short, and cleaned of anything that is not a plain word.
    private static func clean(_ grantType: String) -> String {
        RemoteAuthError.sanitized(String(grantType.prefix(80)))
    }
}

/// Delivers a manager's observations to its observer, in order, on a serial queue: never on the
/// manager's threads, never under its locks.
final class ObservationDelivery: Sendable {
    let observer: (any ManagedSessionObserver)?
    private let queue = DispatchQueue(label: "AuthSessionKit.observer")

    init(observer: (any ManagedSessionObserver)?) {
        self.observer = observer
    }

    /// Queues `observation` (built only when there is an observer).
    func send(_ observation: @autoclosure () -> ManagedSessionObservation) {
        guard let observer else { return }
        let observation = observation()
        queue.async { observer.observe(observation) }
    }

    /// Waits until every observation queued so far was delivered: the queue is serial, so a
    /// block queued now runs after them.
    func delivered() async {
        guard observer != nil else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}

/// Counts one refresh's presentations of its token and its lease waits.
final class RefreshCounters: Sendable {
    private let counts = ConcurrencySafeContainer<(attempts: Int, leaseWaits: Int)>((0, 0))

    func attempted() { counts.withLock { $0.attempts += 1 } }
    func waitedForLease() { counts.withLock { $0.leaseWaits += 1 } }
    var attempts: Int { counts.withLock { $0.attempts } }
    var leaseWaits: Int { counts.withLock { $0.leaseWaits } }
}
