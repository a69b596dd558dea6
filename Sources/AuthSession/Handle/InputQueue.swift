import AuthSessionInterface

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
struct InputQueue {

    private var pending: [HandleInput?] = []
    private var head = 0
    /// Whether a thread is applying inputs (it takes every input added meanwhile).
    private(set) var isApplying = false
    private var receivedCount: UInt64 = 0
    private var appliedCount: UInt64 = 0
    private var idleWaiters: [(target: UInt64, continuation: CheckedContinuation<Void, Never>)] = []

    var isEmpty: Bool { head == pending.count }

    /// Takes `input` in.
    ///
    /// - Returns: `input` itself when no thread is applying inputs: the caller must now apply it,
    ///   then the ones ``next()`` gives. `nil` when another thread is applying them: `input` is
    ///   queued for that thread.
    mutating func add(_ input: HandleInput) -> HandleInput? {
        receivedCount &+= 1
        guard isApplying else {
            // Nobody applies inputs, so none is queued: this one goes first, without queueing.
            isApplying = true
            return input
        }
        pending.append(input)
        return nil
    }

    /// Takes the next input to apply. When none is left the caller stops applying: `nil`.
    mutating func next() -> HandleInput? {
        guard head < pending.count else {
            isApplying = false
            pending.removeAll(keepingCapacity: pending.capacity <= 64)
            head = 0
            return nil
        }
        let input = pending[head]
        pending[head] = nil
        head += 1
        if head > 64 && head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
        return input
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
