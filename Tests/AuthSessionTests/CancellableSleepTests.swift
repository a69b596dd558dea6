import Foundation
import Testing

@testable import AuthSession

/// A weak reference, to see an object go.
private final class WeakSleep: @unchecked Sendable {
    // Read after the sleeps ended, from the test's own task only.
    weak var value: CancellableSleep?
    init(_ value: CancellableSleep) { self.value = value }
}

@Suite("The default clock's sleep")
struct CancellableSleepTests {

    @Test(
        "1,000 hour-long sleeps cancelled: each ends at once, and what it held (its timer, its handler) is freed then, not at its deadline"
    )
    func cancelledSleepsFreeWhatTheyHold() async throws {
        var boxes: [WeakSleep] = []
        for _ in 0..<1_000 {
            let sleep = CancellableSleep()
            boxes.append(WeakSleep(sleep))
            let task = Task { try await sleep.run(nanoseconds: 3_600 * 1_000_000_000) }
            try await waitUntil { sleep.holdsTimer }
            task.cancel()
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(!sleep.holdsTimer)
        }
        // The dispatch timers release their handlers (and the sleeps they keep) once cancelled.
        let all = boxes
        try await waitUntil { all.allSatisfy { $0.value == nil } }
    }

    @Test("a sleep runs to its deadline, and one cancelled before it starts never starts")
    func deadlineAndEarlyCancellation() async throws {
        let start = ProcessInfo.processInfo.systemUptime
        try await CancellableSleep.sleep(nanoseconds: 20_000_000)
        #expect(ProcessInfo.processInfo.systemUptime - start >= 0.019)

        let sleep = CancellableSleep()
        sleep.cancel()
        await #expect(throws: CancellationError.self) { try await sleep.run(nanoseconds: 3_600 * 1_000_000_000) }
        #expect(!sleep.holdsTimer)
    }

    @Test("SystemClock's sleep is cancellable, and ends at once when cancelled")
    func systemClockSleepIsCancellable() async throws {
        let task = Task { try await SystemClock().sleep(for: 3_600) }
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
    }
}
