import AuthSessionInterface

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Something that changes a handle's state: applied one at a time, in arrival order.
indirect enum HandleInput: Sendable {
    /// The provider published an event.
    case event(AuthSessionEvent)
    /// The app became active.
    case activation
    /// The UI asked to resume validation after a biometric failure that kept the session.
    case manualAuthenticationRequest
    /// Prompt `id` finished; `onApplied` runs once the outcome has been applied.
    case biometricPromptCompleted(
        BiometricPromptID,
        Result<Void, BiometricAuthenticationError>,
        onApplied: @Sendable () -> Void
    )
    /// The provider's `signout(with:)`, called by the handle, threw.
    case signOutFailed(any Error)
    /// An observation model starts following the handle: it is given the state the latest step
    /// left, with the user read now, then every later step's.
    case observe(AsyncStream<ObservationUpdate>.Continuation, id: UInt64)
}

/// The inputs waiting to be applied, in arrival order, and whether a thread is applying them.
///
/// Not thread-safe: lives in the handle's locked state. Exactly one thread applies inputs at a
/// time; a thread that brings an input while another applies them only enqueues it.
///
/// It also knows when the applying thread is reading the world for an input (calling the
/// provider, between taking the input and its step), so that an event the provider publishes
/// from inside that read, on that thread, is told apart: it is an echo of the read. An echo is
/// queued like any input (applied after the step that read); an echo published while reading for
/// an echo is dropped. A getter that publishes each time it is read thus costs one more step per
/// input, instead of feeding the handle for ever.
struct InputQueue {

    /// An input waiting to be applied; `isEcho` when it was published from inside a read.
    private struct Pending {
        var input: HandleInput
        var isEcho: Bool
    }

    private var pending: [Pending?] = []
    private var head = 0
    /// Whether a thread is applying inputs (it takes every input added meanwhile).
    private(set) var isApplying = false
    /// The thread reading the world for the input it took, and whether that input is an echo.
    private var reader: (thread: ThreadID, isEcho: Bool)?
    private var receivedCount: UInt64 = 0
    private var appliedCount: UInt64 = 0
    private var idleWaiters: [(target: UInt64, continuation: CheckedContinuation<Void, Never>)] = []

    var isEmpty: Bool { head == pending.count }

    /// Takes `input` in.
    ///
    /// - Returns: `input` itself when no thread is applying inputs: the caller must now apply it,
    ///   then the ones ``next()`` gives. `nil` when another thread is applying them (or this one,
    ///   from inside a call the handle makes): `input` is queued for that thread, or dropped when
    ///   it is an echo of a read made for an echo.
    mutating func add(_ input: HandleInput) -> HandleInput? {
        guard isApplying else {
            // Nobody applies inputs, so none is queued: this one goes first, without queueing.
            receivedCount &+= 1
            isApplying = true
            reader = (ThreadID.current, false)
            return input
        }
        var isEcho = false
        if let reader, reader.thread == ThreadID.current {
            guard !reader.isEcho else { return nil }
            isEcho = true
        }
        receivedCount &+= 1
        pending.append(Pending(input: input, isEcho: isEcho))
        return nil
    }

    /// Takes the next input to apply; the calling thread reads the world for it until
    /// ``endRead()``. When none is left the caller stops applying: `nil`.
    mutating func next() -> HandleInput? {
        guard head < pending.count, let taken = pending[head] else {
            isApplying = false
            reader = nil
            pending.removeAll(keepingCapacity: pending.capacity <= 64)
            head = 0
            return nil
        }
        pending[head] = nil
        head += 1
        if head > 64 && head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
        reader = (ThreadID.current, taken.isEcho)
        return taken.input
    }

    /// Records that the applying thread has read the world for its input: what it publishes from
    /// now on is an input like any other.
    mutating func endRead() {
        reader = nil
    }
    /// Records that one input has been applied, and returns the idle waiters that may resume.
    mutating func markApplied() -> [CheckedContinuation<Void, Never>] {
        appliedCount &+= 1
        guard !idleWaiters.isEmpty else { return [] }
        var ready: [CheckedContinuation<Void, Never>] = []
        idleWaiters.removeAll { waiter in
            guard waiter.target <= appliedCount else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }

    /// Registers a wait for every input received so far.
    ///
    /// - Returns: `true` if they are all applied already; `continuation` was not kept then.
    mutating func addIdleWaiter(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard appliedCount != receivedCount else { return true }
        idleWaiters.append((receivedCount, continuation))
        return false
    }
}

/// A thread's identity, comparable while the thread runs.
struct ThreadID: Equatable {
    private let value: UInt

    /// The calling thread.
    static var current: ThreadID {
        // `pthread_t` is an integer on Glibc and a pointer on Apple platforms and Musl: its bytes,
        // the size of a `UInt` on every platform Swift runs on, are the identity.
        ThreadID(value: withUnsafeBytes(of: pthread_self()) { $0.load(as: UInt.self) })
    }
}
