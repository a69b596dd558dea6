import AuthSession
import Foundation
import Observation
import Testing

/// Lets everything already on the main queue run, `times` rounds (each round also runs what the
/// previous one enqueued).
@MainActor
func drainMainQueue(times: Int) async {
    for _ in 0..<times {
        await withCheckedContinuation { continuation in
            DispatchQueue.main.async { continuation.resume() }
        }
    }
}

/// Waits until `condition` holds for the model, re-checking after each change Observation
/// reports; records an issue and returns `false` if it still does not hold after `timeout`
/// seconds (a safety net).
@MainActor
@discardableResult
func until(
    _ model: ObservableAuthSession,
    timeout: TimeInterval = 300,
    _ condition: @escaping @MainActor (ObservableAuthSession) -> Bool
) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition(model) {
        guard Date() < deadline else {
            Issue.record("the model did not reach the condition within \(timeout) s")
            return false
        }
        let (changed, continuation) = AsyncStream<Void>.makeStream()
        withObservationTracking {
            _ = (model.status, model.user?.identifier, model.lastError, model.isManualAuthenticationRequired)
        } onChange: {
            continuation.yield()
            continuation.finish()
        }
        let timer = Task {
            try? await Task.sleep(nanoseconds: UInt64(max(deadline.timeIntervalSinceNow, 0) * 1_000_000_000))
            continuation.finish()
        }
        for await _ in changed {}
        timer.cancel()
    }
    return true
}
