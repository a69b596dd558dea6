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
    /// An event was dropped (published from inside the read made for an echo): the handle
    /// decides once more from a fresh read of the provider, so that what the dropped event
    /// carried (a sign-out, say) is not lost.
    case reconcile
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
/// an echo is dropped, and a ``HandleInput/reconcile`` is queued in its place (one at a time):
/// a step that reads the provider afresh and decides from what it finds, so that a dropped
/// event's news (a sign-out) is not lost. An event published while reading for a reconcile is
/// dropped too; if it may change the status, one more reconcile follows (at most
/// ``maximumReconcileRun`` in a row). A getter that publishes each time it is read thus costs a
/// bounded number of steps per input, instead of feeding the handle for ever.
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
    /// The thread reading the world for the input it took, whether that input is an echo, and
    /// whether it is a reconcile.
    private var reader: (thread: ThreadID, isEcho: Bool, isReconcile: Bool)?
    /// Whether a reconcile is queued and not yet taken.
    private var isReconcileQueued = false
    /// How many reconciles in a row the latest one is (each queued by a drop during the read of
    /// the one before).
    private var reconcileRun = 0
    /// The most reconciles in a row: a getter that publishes a status change on every read
    /// costs at most this many more steps.
    static let maximumReconcileRun = 4
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
            reader = (ThreadID.current, false, false)
            return input
        }
        var isEcho = false
        if let reader, reader.thread == ThreadID.current {
            guard !reader.isEcho else {
                // Dropped; decide once more from a fresh read. During a reconcile's own read,
                // only for news that may change the status (its read may predate it), and a
                // bounded number of times in a row.
                let queues: Bool
                if reader.isReconcile {
                    queues = Self.mayChangeStatus(input) && reconcileRun < Self.maximumReconcileRun
                } else {
                    queues = true
                    reconcileRun = 0
                }
                if queues && !isReconcileQueued {
                    isReconcileQueued = true
                    reconcileRun += 1
                    receivedCount &+= 1
                    pending.append(Pending(input: .reconcile, isEcho: true))
                }
                return nil
            }
            isEcho = true
        }
        receivedCount &+= 1
        pending.append(Pending(input: input, isEcho: isEcho))
        return nil
    }

    /// Whether `input`, an event, may change the status (a sign-in, a sign-out, a fetch), unlike
    /// a session update or an error report.
    private static func mayChangeStatus(_ input: HandleInput) -> Bool {
        switch input {
        case .event(.sessionUpdated), .event(.unexpectedError): false
        default: true
        }
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
        var isReconcile = false
        if case .reconcile = taken.input {
            isReconcileQueued = false
            isReconcile = true
        }
        reader = (ThreadID.current, taken.isEcho, isReconcile)
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
package struct ThreadID: Equatable, Sendable {
    private let value: UInt

    /// The calling thread.
    package static var current: ThreadID {
        // `pthread_t` is an integer on Glibc and a pointer on Apple platforms and Musl: its bytes,
        // the size of a `UInt` on every platform Swift runs on, are the identity.
        ThreadID(value: withUnsafeBytes(of: pthread_self()) { $0.load(as: UInt.self) })
    }
}
