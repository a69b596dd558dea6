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
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            throw SafetyNetExpired()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
