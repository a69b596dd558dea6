#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The lock a subscription holds while one of its callbacks runs, so that an unsubscribe can wait
/// for a callback in progress.
///
/// Recursive, because a callback may unsubscribe its own subscriber. It also keeps, per thread,
/// how many deliveries the thread is inside: an unsubscribe made from inside any callback does not
/// wait for another subscriber's callback on another thread, which could wait for this one in
/// turn. A `pthread_mutex_t` (recursive) on every platform, understood by ThreadSanitizer.
///
/// All operations are thread-safe.
final class DeliveryLock: @unchecked Sendable {
    // @unchecked: the mutex is only used through the pthread calls below, which synchronise it.

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock, counted as a delivery on this thread.
    func withDelivery<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        DeliveryDepth.current += 1
        defer {
            DeliveryDepth.current -= 1
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }

    /// Returns once no callback of this subscription is running, unless this thread is itself
    /// inside a callback (of any subscriber): then it returns at once.
    func waitForDeliveryInProgress() {
        guard DeliveryDepth.current == 0 else { return }
        pthread_mutex_lock(mutex)
        pthread_mutex_unlock(mutex)
    }
}

/// How many deliveries the current thread is inside, in a thread-local slot.
private enum DeliveryDepth {

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    static var current: Int {
        get { Int(bitPattern: pthread_getspecific(key)) }
        set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
    }
}
