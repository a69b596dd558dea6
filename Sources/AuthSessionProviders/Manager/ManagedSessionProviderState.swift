import AuthSession
import AuthSessionInterface
import Foundation

/// The background tasks a manager keeps, one per slot: arming one cancels the one before.
enum TaskSlot: Hashable {
    case refresh
    case storage
    case rewrite
}

/// Everything mutable in a manager, behind one lock.
struct ProviderState {
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

    enum Phase {
        case recorded
        case presenting
        case abandoned
    }

    /// The lease.
    let lease: RefreshLease
    let phase = ConcurrencySafeContainer(Phase.recorded)

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

/// A timer and when it is due.
struct ScheduledTask {
    let id: UInt64
    let timer: ArmedTimer
    let deadline: Date
}

/// How a timer of the manager waits: on the process's shared timers for the system clock (no task
/// until it fires), or in a task that sleeps on the clock for any other (a test's manual clock).
enum ArmedTimer: Sendable {
    case shared(SystemTimers.Timer)
    case task(Task<Void, Never>)

    /// Disarms it; its body does not run (unless it already started).
    ///
    /// - Parameter ended: Run when the timer will now never run its body and its end is not
    ///   reported otherwise: a task's end is reported by the task itself, cancelled or not; a shared
    ///   timer disarmed before it fired reports nothing, so `ended` stands for that report.
    func cancel(ended: () -> Void = {}) {
        switch self {
        case .shared(let timer): if timer.cancel() { ended() }
        case .task(let task): task.cancel()
        }
    }
}

/// Which stored session a sign-out removes.
enum StoredSessionRemoval {
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
enum PendingRemoval {
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

    let expired = ConcurrencySafeContainer(false)
    /// The time this one is part of (a background refresh's), whose expiry is this one's too.
    let outer: BackgroundTime?

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
