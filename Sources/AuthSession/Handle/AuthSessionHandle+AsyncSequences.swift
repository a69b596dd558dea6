import AuthSessionInterface

extension AuthSessionHandle {

    /// The session status as an async sequence: the status now, then every change, in order.
    ///
    /// Each call creates a consumer of its own. Its view is the same chain delegates see: no gap,
    /// no repeat (two consecutive elements always differ), whatever threads drive the handle:
    /// the current status is read under the lock that orders every change.
    /// The buffer is unbounded, so a slow consumer never loses a change; statuses are small, and
    /// a consumer that stops iterating (its task is cancelled, or it drops the sequence) is
    /// removed. The sequence finishes when the handle is deallocated.
    ///
    /// ```swift
    /// for await status in handle.statusUpdates() {
    ///     render(status)
    /// }
    /// ```
    ///
    /// - Returns: A sequence that starts with the current status.
    public func statusUpdates() -> AsyncStream<AuthSessionStatus> {
        makeConsumer { state, continuation in
            continuation.yield(state.machine.status)
            return state.streams.add(continuation)
        }
    }

    /// Every delegate callback as an `AuthSessionDelegateEvent`, in the
    /// order delegates receive them, from now on.
    ///
    /// The same buffering, removal and finishing rules as ``statusUpdates()``.
    ///
    /// - Returns: A sequence of the events that happen after the call.
    public func delegateEvents() -> AsyncStream<AuthSessionDelegateEvent> {
        makeConsumer { state, continuation in
            state.streams.add(continuation)
        }
    }

    /// The state as an observation model shows it, now and after every step.
    ///
    /// The registration is an input of its own: applied in order with the others, it reads the
    /// user just before and takes the first element under the same lock as every later one, so a
    /// model fed by it never misses, reorders or mixes up a change.
    func observationUpdates() -> AsyncStream<ObservationUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: ObservationUpdate.self, bufferingPolicy: .unbounded)
        let id = state.withLock { $0.streams.reserveID() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.streams.remove(id) }
        }
        submit(.observe(continuation, id: id))
        return stream
    }

    /// The number of live async-sequence consumers.
    var streamConsumerCount: Int {
        state.withLock { $0.streams.count }
    }

    /// A new consumer with an unbounded buffer: `register` seeds and registers it under the
    /// lock (so it misses nothing and repeats nothing), and it is removed when it terminates.
    private func makeConsumer<Element: Sendable>(
        _ register: (inout HandleState, AsyncStream<Element>.Continuation) -> UInt64
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .unbounded)
        let id = state.withLock { register(&$0, continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.streams.remove(id) }
        }
        return stream
    }
}
