import AuthSession
import AuthSessionInterface
import Foundation

// The manager's timers: the proactive refresh, the store's retry, each in a slot of its own.
extension ManagedSessionProvider {

    // MARK: - Timers

    func schedule(
        _ slot: TaskSlot,
        after delay: TimeInterval,
        _ body: @escaping @Sendable (ManagedSessionProvider) -> Void
    ) {
        schedule(slot, at: clock.now.addingTimeInterval(max(0, delay)), body)
    }

    func schedule(
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
        let task: ArmedTimer
        if clock is SystemClock {
            // The shared timers: arming starts no task and wakes no thread (a launch arms the
            // proactive refresh's timer). The interval is measured now, as the clock's sleep does.
            let nanoseconds = SystemTimers.nanoseconds(fromSeconds: date.timeIntervalSince(clock.now))
            task = .shared(
                SystemTimers.shared.schedule(afterNanoseconds: nanoseconds) { [weak self] in
                    guard let self else { return }
                    body(self)
                    taskEnded(slot, id: id)
                }
            )
        } else {
            task = .task(
                Task { [weak self] in
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
            )
        }
        let replaced = state.withLock { state -> ScheduledTask? in
            if let decision {
                guard decision > state.lastTimerDecision else {
                    // An older decision performed late: the timer a later one armed stands.
                    state.tasksEndedEarly.remove(id)
                    return ScheduledTask(id: id, timer: task, deadline: date)
                }
                state.lastTimerDecision = decision
            }
            // A task that ended before it was recorded is not recorded.
            if id < state.lastRecordedTaskID[slot, default: 0] {
                // A newer schedule of this slot was recorded first: this one is already replaced.
                state.tasksEndedEarly.remove(id)
                return ScheduledTask(id: id, timer: task, deadline: date)
            }
            state.lastRecordedTaskID[slot] = id
            if state.tasksEndedEarly.remove(id) != nil { return state.tasks.removeValue(forKey: slot) }
            return state.tasks.updateValue(ScheduledTask(id: id, timer: task, deadline: date), forKey: slot)
        }
        // A timer that ends tells the callers waiting for idleness, as a task's end does.
        if let replaced { replaced.timer.cancel { taskEnded(slot, id: replaced.id) } }
    }

    func taskEnded(_ slot: TaskSlot, id: UInt64) {
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
}
