import AuthSession
import Foundation

// The same helper as AuthSessionOAuth2Tests/Support/ScriptedResourceServer.swift's: test targets
// share no source without a shared target of their own.

/// The error a safety net throws: what the test awaited did not happen in time.
struct SafetyNetExpired: Error {}

/// Runs `body`, failing with ``SafetyNetExpired`` after `seconds`: a safety net against a lost
/// wake-up, not a way to wait.
func withSafetyNet<T: Sendable>(
    _ seconds: TimeInterval = 300,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    // Not a task group: a group waits for every child before it returns, so a body that ignores
    // cancellation (a continuation, `waitUntilIdle()`) would hold the net open for good. The body
    // runs in a task of its own; whichever ends first, the body or a dispatch timer, resumes the
    // one continuation, and on expiry the body's task is cancelled and left behind.
    let outcome = ConcurrencySafeContainer<CheckedContinuation<T, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        outcome.withLock { $0 = continuation }
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0.take() }?.resume(with: result)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard let continuation = outcome.withLock({ $0.take() }) else { return }
            task.cancel()
            continuation.resume(throwing: SafetyNetExpired())
        }
    }
}
