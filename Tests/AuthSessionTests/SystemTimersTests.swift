import Dispatch
import Foundation
import Testing

@testable import AuthSession

/// What one test's timers did: which ran, and when, on the monotonic clock.
private final class Firings: Sendable {
    private let fired = ConcurrencySafeContainer<[Int: [UInt64]]>([:])

    func record(_ index: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        fired.withLock { $0[index, default: []].append(now) }
    }

    var all: [Int: [UInt64]] { fired.withLock { $0 } }
}

/// An object a timer's action holds, to see it let go.
private final class Held: Sendable {}

private final class WeakHeld: @unchecked Sendable {
    // Read after the timers were cancelled, from the test's own task only.
    weak var value: Held?
    init(_ value: Held) { self.value = value }
}

@Suite("The system clock's shared timers: one dispatch timer for the process")
struct SystemTimersTests {

    @Test("each timer runs once, never before its deadline, whatever order they were armed in")
    func eachRunsOnceNotBeforeItsDeadline() async throws {
        let timers = SystemTimers()
        let firings = Firings()
        let delays: [UInt64] = [50, 10, 30, 0, 20, 40].map { $0 * 1_000_000 }
        var armedAt: [Int: UInt64] = [:]
        for (index, delay) in delays.enumerated() {
            armedAt[index] = DispatchTime.now().uptimeNanoseconds
            _ = timers.schedule(afterNanoseconds: delay) { firings.record(index) }
        }
        try await waitUntil { firings.all.count == delays.count }
        // A stray second run would land here too.
        try await SystemClock().sleep(for: 0.1)
        let fired = firings.all
        for (index, delay) in delays.enumerated() {
            let times = try #require(fired[index])
            #expect(times.count == 1, "timer \(index) ran \(times.count) times")
            #expect(times[0] >= armedAt[index]! + delay, "timer \(index) ran before its deadline")
        }
        #expect(timers.armedCount == 0)
    }

    @Test("a deadline earlier than every armed one fires at its time, not at the earlier-armed later one's")
    func anEarlierDeadlineArmedLaterFiresFirst() async throws {
        let timers = SystemTimers()
        let firings = Firings()
        let late = timers.schedule(afterNanoseconds: 3_600 * 1_000_000_000) { firings.record(0) }
        _ = timers.schedule(afterNanoseconds: 5_000_000) { firings.record(1) }
        try await waitUntil { firings.all[1] != nil }
        #expect(firings.all[0] == nil)
        #expect(late.cancel())
    }

    @Test("the earliest timer cancelled: the next one still fires (a fire that finds nothing due schedules the next)")
    func theNextFiresAfterTheEarliestIsCancelled() async throws {
        let timers = SystemTimers()
        let firings = Firings()
        let first = timers.schedule(afterNanoseconds: 20_000_000) { firings.record(0) }
        _ = timers.schedule(afterNanoseconds: 60_000_000) { firings.record(1) }
        #expect(first.cancel())
        #expect(!first.cancel(), "a second cancel disarms nothing")
        try await waitUntil { firings.all[1] != nil }
        #expect(firings.all[0] == nil)
    }

    @Test("1,000 hour-long timers cancelled: each is let go at once, with what its action holds")
    func cancelledTimersLetGoAtOnce() async throws {
        let timers = SystemTimers()
        var boxes: [WeakHeld] = []
        var armed: [SystemTimers.Timer] = []
        for _ in 0..<1_000 {
            let held = Held()
            boxes.append(WeakHeld(held))
            armed.append(timers.schedule(afterNanoseconds: 3_600 * 1_000_000_000) { _ = held })
        }
        #expect(timers.armedCount == 1_000)
        for timer in armed { #expect(timer.cancel()) }
        #expect(timers.armedCount == 0)
        #expect(boxes.allSatisfy { $0.value == nil })
    }

    @Test(
        "armed and cancelled from 8 threads at once: every timer left armed runs exactly once, none cancelled in time runs"
    )
    func concurrentArmingAndCancelling() async throws {
        let timers = SystemTimers()
        let firings = Firings()
        let cancelledInTime = ConcurrencySafeContainer<Set<Int>>([])
        let threads = 8
        let perThread = 500
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var generator = SystemRandomNumberGenerator()
            for step in 0..<perThread {
                let index = thread * perThread + step
                let delay = UInt64.random(in: 0...20_000_000, using: &generator)
                let timer = timers.schedule(afterNanoseconds: delay) { firings.record(index) }
                if Bool.random(using: &generator), timer.cancel() {
                    cancelledInTime.withLock { _ = $0.insert(index) }
                }
            }
        }
        let cancelled = cancelledInTime.withLock { $0 }
        let expected = threads * perThread - cancelled.count
        try await waitUntil { firings.all.count >= expected && timers.armedCount == 0 }
        try await SystemClock().sleep(for: 0.1)
        let fired = firings.all
        #expect(fired.count == expected)
        #expect(fired.values.allSatisfy { $0.count == 1 })
        #expect(Set(fired.keys).isDisjoint(with: cancelled))
    }

    @Test(
        "a due timer whose action waits for a thread is still disarmed by cancel(): it runs only if cancel() says it was too late"
    )
    func cancelAfterTheFireBeforeTheActionStarts() {
        let timers = SystemTimers()
        let started = ConcurrencySafeContainer(false)
        let stop = ConcurrencySafeContainer(false)
        // The global queue's threads all busy: a due action waits for one.
        for _ in 0..<16 { DispatchQueue.global().async { while !stop.withLock({ $0 }) {} } }
        defer { stop.withLock { $0 = true } }
        let timer = timers.schedule(afterNanoseconds: 0) { started.withLock { $0 = true } }
        // Handed over (no longer a deadline), its action not yet taken up, or already run.
        #expect(poll(30) { timers.pendingDeadlines == 0 })
        let startedBefore = started.withLock { $0 }
        let disarmed = timer.cancel()
        stop.withLock { $0 = true }
        #expect(disarmed || startedBefore, "cancel() said too late although the action had not started")
        if disarmed {
            // Whatever the queue does now, the action never runs: wait for the queue to drain.
            let drained = DispatchSemaphore(value: 0)
            DispatchQueue.global().async { drained.signal() }
            #expect(drained.wait(timeout: .now() + 300) == .success)
            #expect(!started.withLock { $0 }, "a disarmed action ran")
        }
    }
}

/// Polls `condition` every 0.2 ms for at most `seconds` (a safety net), from a thread that may block.
private func poll(_ seconds: TimeInterval, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() >= deadline { return false }
        usleep(200)
    }
    return true
}
