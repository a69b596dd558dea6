import Foundation

/// A value behind an `NSLock`, for the contract module's own few pieces of shared state (it has
/// no lock box of its own: `ConcurrencySafeContainer` lives in the engine).
///
/// All operations are thread-safe. Never call out to unknown code inside `withLock`.
final class InterfaceLock<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`, which holds `lock` for the access.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
