import AuthSessionInterface

/// The async-sequence consumers of one handle.
///
/// Not thread-safe: lives in the handle's locked state. Yielding to a continuation is not a
/// call-out (it at most schedules the consumer's task), so it happens under the lock, in step
/// order, which is what makes every consumer's view a gap-free chain.
struct StreamRegistry {

    private var statusConsumers: [UInt64: AsyncStream<AuthSessionStatus>.Continuation] = [:]
    private var eventConsumers: [UInt64: AsyncStream<AuthSessionDelegateEvent>.Continuation] = [:]
    private var observationConsumers: [UInt64: AsyncStream<ObservationUpdate>.Continuation] = [:]
    private var lastID: UInt64 = 0

    var isEmpty: Bool { statusConsumers.isEmpty && eventConsumers.isEmpty && observationConsumers.isEmpty }
    var count: Int { statusConsumers.count + eventConsumers.count + observationConsumers.count }

    mutating func add(_ continuation: AsyncStream<AuthSessionStatus>.Continuation) -> UInt64 {
        lastID += 1
        statusConsumers[lastID] = continuation
        return lastID
    }

    mutating func add(_ continuation: AsyncStream<AuthSessionDelegateEvent>.Continuation) -> UInt64 {
        lastID += 1
        eventConsumers[lastID] = continuation
        return lastID
    }

    /// Whether any observation model is registered: steps then read the user for it.
    var hasObservationConsumers: Bool { !observationConsumers.isEmpty }

    /// An identity for a consumer registered later (an observation model registers as an input).
    mutating func reserveID() -> UInt64 {
        lastID += 1
        return lastID
    }

    mutating func add(_ continuation: AsyncStream<ObservationUpdate>.Continuation, id: UInt64) {
        observationConsumers[id] = continuation
    }

    mutating func remove(_ id: UInt64) {
        statusConsumers[id] = nil
        eventConsumers[id] = nil
        observationConsumers[id] = nil
    }

    /// Hands one step's notifications to every consumer.
    ///
    /// - Parameter update: The step as an observation model sees it, or `nil` when nothing it
    ///   shows changed.
    func yield(_ notifications: [SessionNotification], update: @autoclosure () -> ObservationUpdate?) {
        if !observationConsumers.isEmpty, let update = update() {
            for continuation in observationConsumers.values {
                continuation.yield(update)
            }
        }
        for notification in notifications {
            if !statusConsumers.isEmpty, case .statusChanged(_, let newStatus) = notification {
                for continuation in statusConsumers.values {
                    continuation.yield(newStatus)
                }
            }
            if !eventConsumers.isEmpty, let event = notification.delegateEvent {
                for continuation in eventConsumers.values {
                    continuation.yield(event)
                }
            }
        }
    }

    /// Removes every consumer and returns a function that finishes their sequences; call it
    /// outside the lock, since finishing runs the consumers' termination handlers.
    mutating func removeAll() -> @Sendable () -> Void {
        let statuses = Array(statusConsumers.values)
        let events = Array(eventConsumers.values)
        let observations = Array(observationConsumers.values)
        statusConsumers = [:]
        eventConsumers = [:]
        observationConsumers = [:]
        return {
            for continuation in statuses {
                continuation.finish()
            }
            for continuation in events {
                continuation.finish()
            }
            for continuation in observations {
                continuation.finish()
            }
        }
    }
}

/// One step as an observation model sees it: the state after the step, and what went wrong in it.
struct ObservationUpdate: Sendable {
    let status: AuthSessionStatus
    let isManualAuthenticationRequired: Bool
    let user: (any AuthSessionUserProtocol)?
    let errors: [AuthSessionError]
}
