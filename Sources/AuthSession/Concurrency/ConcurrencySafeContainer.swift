#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value that is only ever read or written while a lock is held.
///
/// The lock is `os_unfair_lock` on Apple platforms and a `pthread_mutex_t` elsewhere; both are
/// understood by ThreadSanitizer. (Swift's `Mutex` is avoided on purpose: on Linux its contended
/// path makes ThreadSanitizer report races that are not there.) The value and the lock share one
/// allocation.
///
/// ```swift
/// let counter = ConcurrencySafeContainer(0)
/// counter.withLock { $0 += 1 }
/// ```
///
/// All operations are thread-safe. The lock is not recursive: calling ``withLock(_:)`` on the
/// same container from inside its own closure deadlocks. Never call out to unknown code (a
/// delegate, a continuation, a provider) inside the closure.
public struct ConcurrencySafeContainer<Value> {

    @usableFromInline
    let storage: Storage

    /// Creates a container holding `value`.
    ///
    /// - Parameter value: The initial value.
    public init(_ value: Value) {
        storage = Storage.make(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    ///
    /// - Parameter body: Reads or changes the value; runs while the lock is held.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the lock is released either way.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }

    /// Runs `body` with exclusive access to the value if the lock is free now; returns `nil`
    /// without waiting if another caller holds it.
    ///
    /// For a caller that must not wait on a lock whose holder may be waiting on it in turn.
    package func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        try storage.withLockIfAvailable(body)
    }
}

// The value is only reachable through `withLock`, which holds the lock for the whole access.
extension ConcurrencySafeContainer: @unchecked Sendable where Value: Sendable {}

extension ConcurrencySafeContainer {

    #if canImport(Darwin)
    @usableFromInline
    typealias PlatformLock = os_unfair_lock
    #else
    @usableFromInline
    typealias PlatformLock = pthread_mutex_t
    #endif

    /// The value as the header and the lock as the single element of one heap object.
    @usableFromInline
    final class Storage: ManagedBuffer<Value, PlatformLock> {

        static func make(_ value: Value) -> Storage {
            let buffer = Storage.create(minimumCapacity: 1) { _ in value }
            // `create` returns the dynamic type it was called on.
            let storage = unsafeDowncast(buffer, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { lock in
                #if canImport(Darwin)
                lock.initialize(to: os_unfair_lock())
                #else
                lock.initialize(to: pthread_mutex_t())
                let status = pthread_mutex_init(lock, nil)
                precondition(status == 0, "pthread_mutex_init failed: \(status)")
                #endif
            }
            return storage
        }

        deinit {
            withUnsafeMutablePointerToElements { lock in
                #if !canImport(Darwin)
                pthread_mutex_destroy(lock)
                #endif
                _ = lock.deinitialize(count: 1)
            }
        }

        func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
            try withUnsafeMutablePointers { value, lock in
                #if canImport(Darwin)
                guard os_unfair_lock_trylock(lock) else { return nil }
                defer { os_unfair_lock_unlock(lock) }
                #else
                guard pthread_mutex_trylock(lock) == 0 else { return nil }
                defer { pthread_mutex_unlock(lock) }
                #endif
                return try body(&value.pointee)
            }
        }

        @inlinable
        func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
            try withUnsafeMutablePointers { value, lock in
                #if canImport(Darwin)
                os_unfair_lock_lock(lock)
                defer { os_unfair_lock_unlock(lock) }
                #else
                pthread_mutex_lock(lock)
                defer { pthread_mutex_unlock(lock) }
                #endif
                return try body(&value.pointee)
            }
        }
    }
}
