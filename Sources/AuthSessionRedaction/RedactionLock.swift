import Foundation

/// A value behind an `NSLock`: the registry of secrets here, and the contract module's few pieces
/// of shared state (both sit below the engine, whose `ConcurrencySafeContainer` they cannot use;
/// `Mutex` is newer than the deployment targets).
///
/// All operations are thread-safe. Never call out to unknown code inside `withLock`.
package final class RedactionLock<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`, which holds `lock` for the access.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
