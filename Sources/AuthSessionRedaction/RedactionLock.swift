import Foundation

/// A value behind an `NSLock`: the registry of secrets (this module sits below every other and has
/// no lock box of its own; `Mutex` is newer than the deployment targets).
///
/// All operations are thread-safe. Never call out to unknown code inside `withLock`.
final class RedactionLock<Value: Sendable>: @unchecked Sendable {
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
