import Dispatch
import Foundation

/// A sleep whose cancellation frees what it holds at once: a dispatch timer that the cancellation
/// cancels. (`Task.sleep` on Linux leaves a cancelled sleep's timer queued until its deadline: a
/// manager that reschedules an hour-long refresh timer on every refresh would keep each one, about
/// a kilobyte and a half, for an hour.)
final class CancellableSleep: Sendable {

    // Dispatch sources are thread-safe but not marked Sendable on every platform.
    private struct State: @unchecked Sendable {
        var continuation: CheckedContinuation<Void, any Error>?
        var timer: (any DispatchSourceTimer)?
        var isCancelled = false
    }

    private let state = ConcurrencySafeContainer(State())

    /// Sleeps `nanoseconds` in real time.
    ///
    /// - Parameter nanoseconds: How long.
    /// - Throws: `CancellationError` if the task is cancelled first.
    static func sleep(nanoseconds: UInt64) async throws {
        let sleep = CancellableSleep()
        try await sleep.run(nanoseconds: nanoseconds)
    }

    /// Sleeps; ``cancel()`` (the task's cancellation) ends it early.
    func run(nanoseconds: UInt64) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                start(continuation, nanoseconds: nanoseconds)
            }
        } onCancel: {
            cancel()
        }
    }

    private func start(_ continuation: CheckedContinuation<Void, any Error>, nanoseconds: UInt64) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        // Capped so the conversion never overflows: 100 years is no meaningful sleep.
        let capped = Int(min(nanoseconds, 100 * 365 * 86_400 * 1_000_000_000))
        timer.schedule(deadline: .now() + .nanoseconds(capped), leeway: .milliseconds(1))
        // A strong capture: until the deadline or the cancellation, the timer keeps the sleep; both
        // cancel the timer, and a cancelled timer releases its handler.
        timer.setEventHandler { self.finish(with: nil) }
        let cancelledFirst = state.withLock { state -> Bool in
            if state.isCancelled { return true }
            state.continuation = continuation
            state.timer = timer
            return false
        }
        // Resumed exactly once whatever happens: libdispatch traps on releasing a source that was
        // never resumed.
        timer.resume()
        if cancelledFirst {
            timer.cancel()
            continuation.resume(throwing: CancellationError())
        }
    }

    /// Ends the sleep now, by its cancellation.
    func cancel() {
        finish(with: CancellationError())
    }

    /// Resumes the sleeper once (with `error`, or normally) and cancels the timer, which releases
    /// its handler.
    private func finish(with error: (any Error)?) {
        let (continuation, timer) = state.withLock { state in
            state.isCancelled = state.isCancelled || error != nil
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        guard let continuation else { return }
        if let error {
            continuation.resume(throwing: error)
        } else {
            continuation.resume()
        }
    }

    /// Whether the sleep still holds a timer (for the tests).
    var holdsTimer: Bool { state.withLock { $0.timer != nil } }
}
