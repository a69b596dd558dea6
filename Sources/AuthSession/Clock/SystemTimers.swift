import Dispatch
import Foundation

/// The process's timers on the system clock, behind one dispatch timer: arming a deadline later
/// than the earliest one armed wakes no thread and starts no task.
///
/// What it replaces, for ``SystemClock``: a task per timer that sleeps until its deadline. Each
/// such task woke a thread of the cooperative pool to start its sleep, and each sleep armed a
/// dispatch timer of its own (a write that wakes libdispatch's manager thread): at a launch, the
/// proactive refresh's timer cost about a third of the launch. Here arming is a dictionary insert
/// under a lock, and the one dispatch timer is rescheduled only for a deadline earlier than every
/// other.
///
/// Deadlines are on the monotonic clock (`DispatchTime`), as ``SystemClock``'s sleeps are: a
/// timer set to fire in an hour fires in an hour whatever is done to the wall clock meanwhile. A
/// cancelled timer is removed at once, with what its action holds. Actions run on a global queue,
/// each on its own, never under the queue's lock.
package final class SystemTimers: Sendable {

    /// The process's queue.
    package static let shared = SystemTimers()

    /// A timer armed here; ``cancel()`` disarms it.
    package struct Timer: Sendable {
        fileprivate let id: UInt64
        fileprivate let queue: SystemTimers

        /// Disarms the timer: its action will not run unless it already started (a due timer
        /// whose action waits for a thread of the global queue is disarmed too). Idempotent.
        ///
        /// - Returns: Whether this call disarmed it before its action started: exactly one of
        ///   this returning `true` and the action running happens.
        @discardableResult
        package func cancel() -> Bool {
            queue.cancel(id)
        }
    }

    private struct Entry {
        let deadline: UInt64
        let action: @Sendable () -> Void
        /// Due, and handed to a global queue: it is no longer a deadline to schedule, and whoever
        /// removes the entry first, the handed action or ``Timer/cancel()``, decides whether it
        /// runs.
        var isFiring = false
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var lastID: UInt64 = 0
        /// The deadline the dispatch timer is scheduled for; `nil` when it is scheduled for none.
        var armedDeadline: UInt64?
    }

    // Dispatch sources are thread-safe but not marked Sendable on every platform.
    private struct Source: @unchecked Sendable {
        let timer: any DispatchSourceTimer
    }

    private let state = ConcurrencySafeContainer(State())
    private let source: Source

    /// A queue of its own (the tests'); the process's is ``shared``.
    package init() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "AuthSessionKit.SystemTimers"))
        source = Source(timer: timer)
        timer.schedule(deadline: .distantFuture)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.resume()
    }

    /// Arms a timer that runs `action` once, `nanoseconds` from now.
    ///
    /// - Parameters:
    ///   - nanoseconds: How long from now, on the monotonic clock; zero runs it as soon as a
    ///     thread is free.
    ///   - action: What to do at the deadline; runs on a global queue.
    /// - Returns: The timer, to cancel it.
    package func schedule(afterNanoseconds nanoseconds: UInt64, _ action: @escaping @Sendable () -> Void) -> Timer {
        let now = DispatchTime.now().uptimeNanoseconds
        // Capped so the sum never overflows: a century is no meaningful timer.
        let deadline = now + min(nanoseconds, UInt64(Self.centurySeconds) * 1_000_000_000)
        let (id, rearm) = state.withLock { state -> (UInt64, Bool) in
            state.lastID += 1
            state.entries[state.lastID] = Entry(deadline: deadline, action: action)
            guard state.armedDeadline.map({ deadline < $0 }) ?? true else { return (state.lastID, false) }
            state.armedDeadline = deadline
            return (state.lastID, true)
        }
        if rearm { reschedule() }
        return Timer(id: id, queue: self)
    }

    /// `seconds` as nanoseconds of a monotonic sleep or timer: 0 for an interval that is not
    /// positive or not finite, at most a century (no meaningful wait, and the product never
    /// overflows).
    package static func nanoseconds(fromSeconds seconds: TimeInterval) -> UInt64 {
        guard seconds > 0, seconds.isFinite else { return 0 }
        return UInt64(min(seconds, centurySeconds) * 1_000_000_000)
    }

    private static let centurySeconds: TimeInterval = 100 * 365 * 86_400

    /// The number of timers armed, due ones whose action has not started included (for the tests).
    package var armedCount: Int { state.withLock { $0.entries.count } }

    /// The number of armed timers not yet due (for the tests).
    package var pendingDeadlines: Int { state.withLock { $0.entries.values.filter { !$0.isFiring }.count } }

    private func cancel(_ id: UInt64) -> Bool {
        // Removed at once, with its action; the dispatch timer keeps its deadline, and a fire that
        // finds nothing due schedules the next one.
        state.withLock { $0.entries.removeValue(forKey: id) } != nil
    }

    /// Schedules the dispatch timer for the earliest deadline armed. Called outside the lock; the
    /// deadline is read again under it, so of two reschedules racing, the last one to read sets
    /// the earliest deadline (a dispatch timer takes its last `schedule`).
    private func reschedule() {
        state.withLock { state in
            let deadline = state.entries.values.lazy.filter { !$0.isFiring }.map(\.deadline).min()
            state.armedDeadline = deadline
            source.timer.schedule(
                deadline: deadline.map { DispatchTime(uptimeNanoseconds: $0) } ?? .distantFuture,
                leeway: .milliseconds(1)
            )
        }
    }

    /// Hands every timer now due to a global queue, and schedules the next. A handed timer runs
    /// only if it is still armed when a thread takes it up: a cancellation in between disarms it.
    private func fire() {
        let now = DispatchTime.now().uptimeNanoseconds
        // No order among them: the actions go to a concurrent queue.
        let due = state.withLock { state -> [UInt64] in
            let due = state.entries.filter { !$0.value.isFiring && $0.value.deadline <= now }.map(\.key)
            for id in due { state.entries[id]?.isFiring = true }
            return due
        }
        reschedule()
        for id in due {
            DispatchQueue.global().async { [weak self] in
                guard let entry = self?.state.withLock({ $0.entries.removeValue(forKey: id) }) else { return }
                entry.action()
            }
        }
    }
}
