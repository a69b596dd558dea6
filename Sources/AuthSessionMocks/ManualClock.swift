import AuthSession
import Foundation

/// A clock that moves only when a test moves it, and wakes the tasks sleeping on it as it
/// passes their deadlines.
///
/// Code under test sleeps on it through `AuthSessionClock/sleep(until:)`: the session manager's
/// scheduled refresh, a retry's back-off, a device-flow poll. A test waits until the expected
/// number of tasks sleep (``waitForSleepers(_:timeout:)``), then moves the clock
/// (``advance(by:)``, ``now``, ``advanceToNextDeadline()``): sleepers whose deadline is reached are
/// resumed in deadline order, after the clock has moved and outside its lock. A cancelled sleeper
/// leaves at once, throwing `CancellationError`.
///
/// All operations are thread-safe.
public final class ManualClock: AuthSessionClock {

    /// The date a new clock shows unless told otherwise: 2027-01-15 08:00:00 UTC.
    public static let defaultStart = Date(timeIntervalSince1970: 1_800_000_000)

    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: WaitableState {
        var now: Date
        var uptime: TimeInterval = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelledBeforeSleeping: Set<UInt64> = []
        var nextSleeperID: UInt64 = 0
        var waiters = WaiterList<State>()
    }

    private let state: ConcurrencySafeContainer<State>

    /// Creates a clock showing `now`.
    ///
    /// - Parameter now: The starting date.
    public init(now: Date = ManualClock.defaultStart) {
        state = ConcurrencySafeContainer(State(now: now))
    }

    /// The date the clock shows; set it to jump. Setting it resumes the sleepers it passes.
    public var now: Date {
        get { state.withLock { $0.now } }
        set { move { _ in newValue } }
    }

    /// Moves the clock forward (or back, with a negative interval), resuming the sleepers whose
    /// deadline it reaches.
    ///
    /// - Parameter interval: Seconds to move.
    public func advance(by interval: TimeInterval) {
        move { $0.now + interval }
    }

    /// Moves the clock to the earliest deadline of the tasks sleeping on it, and resumes them.
    ///
    /// - Returns: The interval the clock moved, or `nil` (and no move) when no task sleeps.
    @discardableResult
    public func advanceToNextDeadline() -> TimeInterval? {
        var moved: TimeInterval?
        move { state in
            guard let deadline = state.sleepers.values.map(\.deadline).min() else { return state.now }
            moved = max(0, deadline.timeIntervalSince(state.now))
            return max(state.now, deadline)
        }
        return moved
    }

    /// Seconds the clock has moved forward in all: moving it back (a clock set back) leaves it
    /// as it is, as the system's uptime does.
    public var uptime: TimeInterval {
        state.withLock { $0.uptime }
    }

    /// The number of tasks sleeping on the clock now.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// The earliest deadline a task sleeps until, or `nil` when none sleeps.
    public var nextDeadline: Date? {
        state.withLock { $0.sleepers.values.map(\.deadline).min() }
    }

    /// Returns once at least `count` tasks sleep on the clock.
    ///
    /// - Parameters:
    ///   - count: The number of sleepers to wait for.
    ///   - timeout: A safety net in real seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if fewer sleep within `timeout`.
    public func waitForSleepers(_ count: Int = 1, timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "\(count) sleepers on the clock") { $0.sleepers.count >= count }
    }

    /// Sleeps until the clock shows `deadline`; returns at once if it already does.
    ///
    /// - Parameter deadline: The date to sleep until.
    /// - Throws: `CancellationError` if the task is cancelled first.
    public func sleep(until deadline: Date) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            state.nextSleeperID += 1
            return state.nextSleeperID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.mutateAndNotify { state in
                    if state.cancelledBeforeSleeping.remove(id) != nil {
                        return .failure(CancellationError())
                    }
                    if deadline <= state.now {
                        return .success(())
                    }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                }
            }
        } onCancel: {
            let sleeper = state.mutateAndNotify { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    // Cancelled before it slept, or already resumed: the first case must not sleep.
                    state.cancelledBeforeSleeping.insert(id)
                    return Sleeper?.none
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        // An ID whose sleep ended normally may have been marked by a late cancellation.
        state.withLock { _ = $0.cancelledBeforeSleeping.remove(id) }
    }

    /// Sets the date to `target(state)`, then resumes the sleepers it reached, earliest first.
    private func move(to target: (State) -> Date) {
        let due = state.mutateAndNotify { state in
            let destination = target(state)
            state.uptime += max(0, destination.timeIntervalSince(state.now))
            state.now = destination
            let due = state.sleepers.filter { $0.value.deadline <= destination }
                .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
            for (id, _) in due {
                state.sleepers[id] = nil
            }
            return due.map(\.value.continuation)
        }
        for continuation in due {
            continuation.resume()
        }
    }
}
