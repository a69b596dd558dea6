import AuthSession
import Foundation
import Testing

@testable import AuthSessionProviders

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock file's turn record (its first 16 bytes: the turns counted, then whether a waiter
/// asked for them): a waiter keeps waiting while holders make progress, however long the queue,
/// and an uncontended access writes nothing.
@Suite("The store's exclusive access: turns counted when a waiter asks")
struct ExclusiveAccessTurnsTests {

    /// The lock file's first 16 bytes, as (turns, asked); `nil` when it is shorter.
    private func turnRecord(_ path: String) -> (turns: UInt64, asked: UInt64)? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var words: (UInt64, UInt64) = (0, 0)
        guard pread(descriptor, &words, 16, 0) == 16 else { return nil }
        return words
    }

    @Test("an uncontended access writes nothing to the lock file; an asked one counts a turn and clears the ask")
    func holdersCountOnlyWhenAsked() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let lockPath = folder.path("session.json.lock")
        for _ in 0..<100 {
            try store.withExclusiveAccess {}
        }
        var info = stat()
        #expect(stat(lockPath, &info) == 0)
        #expect(info.st_size == 0, "nobody waited: no turn was written")

        let descriptor = open(lockPath, O_RDWR)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var asked: UInt64 = 1
        #expect(pwrite(descriptor, &asked, 8, 8) == 8)
        try store.withExclusiveAccess {}
        #expect(turnRecord(lockPath)?.turns == 1)
        #expect(turnRecord(lockPath)?.asked == 0)
        try store.withExclusiveAccess {}
        #expect(turnRecord(lockPath)?.turns == 1, "the ask was answered: the next turn is not counted")
    }

    @Test("a waiter behind holders that keep taking turns waits past its limit, asking each time, then enters")
    func waiterHonoursProgress() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let limit: TimeInterval = 1
        let waiter = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: limit)
        try waiter.withExclusiveAccess {}  // makes the lock file
        let lockPath = folder.path("session.json.lock")
        // Everything that blocks runs on threads of its own, never on the cooperative pool, which
        // the rest of a parallel run needs.
        let (answered, waitedWhileMoving, outcome) = try await onOwnThread { () -> (Int, Bool, String?) in
            // Another process's holders, as one open file description that never lets go between
            // turns: each time the waiter asks, a turn is counted, as the next holder would.
            let holder = open(lockPath, O_RDWR)
            guard holder >= 0, flock(holder, LOCK_EX) == 0 else { return (0, false, "no lock") }
            defer { close(holder) }
            let outcome = ConcurrencySafeContainer<String?>(nil)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                do {
                    try waiter.withExclusiveAccess {}
                    outcome.withLock { $0 = "entered" }
                } catch {
                    outcome.withLock { $0 = "\(error)" }
                }
                finished.signal()
            }.start()
            var answered = 0
            let holdUntil = ProcessInfo.processInfo.systemUptime + 2.5 * limit
            while ProcessInfo.processInfo.systemUptime < holdUntil {
                var record: (UInt64, UInt64) = (0, 0)
                if pread(holder, &record, 16, 0) == 16, record.1 != 0 {
                    record = (record.0 &+ 1, 0)
                    _ = pwrite(holder, &record, 16, 0)
                    answered += 1
                }
                usleep(5_000)
            }
            let waitedWhileMoving = outcome.withLock { $0 } == nil
            flock(holder, LOCK_UN)
            // A safety net for a lost wake-up, not a measurement.
            _ = finished.wait(timeout: .now() + 60)
            return (answered, waitedWhileMoving, outcome.withLock { $0 })
        }
        #expect(waitedWhileMoving, "the waiter waited while the queue moved")
        #expect(answered > 2, "the waiter asked for turns while it waited")
        #expect(outcome == "entered", "a queue that moves is no stopped holder")
    }
}
