import AuthSession
import AuthSessionInterface
import Foundation

// Waiting for the manager: idle, the launch settled, callers waiting for a refresh; the count of operations in flight.
extension ManagedSessionProvider {

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
    func waitForState(launched: Bool) async {
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

    func cancelWaiter(_ id: UInt64) {
        input { machine, _ in machine.cancel(waiter: id) }
    }

    func beginOperation() {
        state.withLock { beginOperationLocked(&$0) }
    }

    func beginOperationLocked(_ state: inout ProviderState) {
        state.runningOperations += 1
    }

    func endOperation() {
        let now = clock.now
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.runningOperations -= 1
            return state.takeIdleWaiters(now: now)
        }
        for waiter in waiters { waiter.resume() }
    }
}
