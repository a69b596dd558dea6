import AuthSession
import AuthSessionMocks
import Foundation
import Testing

/// Sleepers on the manual clock wake when, and only when, the clock reaches their deadline.
@Suite struct ManualClockSleepTests {

    /// The order in which sleepers woke.
    private final class WakeLog: Sendable {
        let order = ConcurrencySafeContainer<[Int]>([])
    }

    @Test func sleepersWakeInDeadlineOrderOnlyWhenReached() async throws {
        let clock = ManualClock()
        let log = WakeLog()
        let start = clock.now
        let sleepers = [30.0, 10, 20].enumerated().map { index, delay in
            Task {
                try await clock.sleep(until: start.addingTimeInterval(delay))
                log.order.withLock { $0.append(index) }
            }
        }
        try await clock.waitForSleepers(3)
        #expect(clock.nextDeadline == start.addingTimeInterval(10))
        clock.advance(by: 9.999)
        #expect(clock.sleeperCount == 3)
        clock.now = start.addingTimeInterval(25)
        try await sleepers[1].value
        try await sleepers[2].value
        #expect(clock.sleeperCount == 1)
        #expect(log.order.withLock { $0 }.sorted() == [1, 2])
        #expect(clock.advanceToNextDeadline() == 5)
        try await sleepers[0].value
        #expect(clock.now == start.addingTimeInterval(30))
        #expect(clock.advanceToNextDeadline() == nil)
    }

    @Test func pastDeadlinesReturnAtOnce() async throws {
        let clock = ManualClock()
        try await clock.sleep(until: clock.now)
        try await clock.sleep(for: -5)
        #expect(clock.sleeperCount == 0)
    }

    @Test func settingTheDateWakesSleepers() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: 60) }
        try await clock.waitForSleepers(1)
        clock.now = clock.now.addingTimeInterval(3_600)
        try await sleeper.value
    }

    /// Cancellation races the sleeper's registration: either way the task ends, and nothing stays.
    @Test func cancellationAlwaysEndsTheSleep() async throws {
        let clock = ManualClock()
        for round in 0..<500 {
            let sleeper = Task { try await clock.sleep(for: 60) }
            if round % 2 == 0 {
                try await clock.waitForSleepers(1)
            }
            sleeper.cancel()
            await #expect(throws: CancellationError.self) { try await sleeper.value }
        }
        #expect(clock.sleeperCount == 0)
    }

    @Test func concurrentAdvancesAddUp() async throws {
        let clock = ManualClock()
        let start = clock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1_000 {
                group.addTask { clock.advance(by: 1) }
            }
        }
        #expect(clock.now == start.addingTimeInterval(1_000))
    }
}
