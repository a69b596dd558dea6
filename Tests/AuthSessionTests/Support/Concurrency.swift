import Foundation

/// Starts `body(0..<count)` on `count` threads of their own, released together; the group is
/// left when all have finished.
///
/// Real threads (not a pool) so that every writer genuinely runs in parallel with the others.
private func startParallelThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            start.wait()
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count {
        start.signal()
    }
    return group
}

/// Runs `body(0..<count)` on `count` threads of their own, started together, and returns when
/// all have finished.
func onParallelThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let group = startParallelThreads(count, body)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        group.notify(queue: .global()) { continuation.resume() }
    }
}

/// Like ``onParallelThreads(_:_:)``, but stops waiting after `timeout` seconds, a safety net
/// that turns a deadlock into a failure instead of a hung test run.
///
/// - Returns: `false` if the threads had not all finished in time.
func onParallelThreads(_ count: Int, timeout: TimeInterval, _ body: @escaping @Sendable (Int) -> Void) async -> Bool {
    let group = startParallelThreads(count, body)
    return await withCheckedContinuation { continuation in
        Thread {
            continuation.resume(returning: group.wait(timeout: .now() + timeout) == .success)
        }
        .start()
    }
}

/// A fixed set of threads of their own that run one round of work after another, released
/// together each round: for races repeated thousands of times, without creating threads each
/// time (which is slow, above all under ThreadSanitizer).
///
/// Not thread-safe: run one round at a time, from one task.
final class ParallelThreads: @unchecked Sendable {
    // @unchecked: `round` and `isStopping` are read and written under `lock` (the semaphores and
    // the group order the rounds; the lock makes that order one ThreadSanitizer sees too).

    private let starts: [DispatchSemaphore]
    private let finished = DispatchGroup()
    private let lock = NSLock()
    private var round: (@Sendable (Int) -> Void)?
    private var isStopping = false

    /// Starts `count` threads that wait for rounds.
    init(_ count: Int) {
        starts = (0..<count).map { _ in DispatchSemaphore(value: 0) }
        for index in 0..<count {
            let thread = Thread { [starts, self] in
                while true {
                    starts[index].wait()
                    let (isStopping, round) = self.lock.withLock { (self.isStopping, self.round) }
                    if isStopping { return }
                    round?(index)
                    self.finished.leave()
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Runs `body(0..<count)`, one call on each thread, all released at once; returns when all
    /// have finished.
    func run(_ body: @escaping @Sendable (Int) -> Void) async {
        lock.withLock { round = body }
        for start in starts {
            finished.enter()
            start.signal()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finished.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Ends the threads once they are idle. Call it when done.
    func stop() {
        lock.withLock { isStopping = true }
        for start in starts {
            start.signal()
        }
    }
}
