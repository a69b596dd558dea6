import AuthSessionInterface
import Dispatch

extension AuthSessionHandle {

    /// Subscribes `delegate` to every future callback, delivered asynchronously on `queue`.
    ///
    /// The delegate is held weakly and never needs to unsubscribe. Its first callback is
    /// `authentication(_:didStartObservingWith:for:)` with the status now; the status changes
    /// after it form a chain starting there. Subscribing it again keeps one subscription, moves
    /// it to the new queue and tells it the status again (callbacks already enqueued on the old
    /// queue still run there, so order across the move is not guaranteed). On a serial queue the
    /// callbacks arrive in the order of the changes.
    ///
    /// - Parameters:
    ///   - delegate: The observer.
    ///   - queue: Where its callbacks run, for example `.main`.
    public func subscribeDelegate(_ delegate: any AuthSessionDelegate, receive queue: DispatchQueue) {
        subscribe(Subscription(delegate: delegate), of: delegate, on: queue)
    }

    /// Stops callbacks to `delegate`; does nothing if it is not subscribed.
    ///
    /// When it returns, `delegate` is never called again, including for callbacks already
    /// enqueued, and a callback of it that was running on another thread has finished. Called
    /// from inside `delegate`'s own callback, the rest of that step is not delivered; called from
    /// inside any other callback this package delivers (of any handle), it does not wait for a
    /// callback of `delegate` running on another thread (which could be waiting for this one).
    /// Do not call it while holding a lock that `delegate`'s callbacks take.
    ///
    /// - Parameter delegate: The observer to remove.
    public func unsubscribeDelegate(_ delegate: any AuthSessionDelegate) {
        unsubscribe(Subscription.ID(object: ObjectIdentifier(delegate), kind: .delegate))
    }

    /// Subscribes a private listener: `publisher` receives every delegate callback as an
    /// `AuthSessionDelegateEvent`, asynchronously on `queue`, in the same order delegates see
    /// them, after `publishCurrentStatus(_:for:)` with the status now.
    ///
    /// Held weakly, like a delegate. Pair it with ``SessionDelegateEventProxy`` to react on the
    /// main actor through a closure without exposing delegate methods; a
    /// ``SessionDelegateEventProxy`` is always delivered on the main queue, whatever `queue` says,
    /// so that its closure runs inside the delivery an unsubscribe waits for.
    ///
    /// - Parameters:
    ///   - publisher: The listener.
    ///   - queue: Where `publish(_:for:)` is called; the main queue unless you say otherwise.
    public func subscribeEventPublisher(
        _ publisher: any AuthSessionDelegateEventPublisher,
        receive queue: DispatchQueue = .main
    ) {
        let queue = publisher is SessionDelegateEventProxy ? .main : queue
        subscribe(Subscription(publisher: publisher), of: publisher, on: queue)
    }

    /// Stops events to `publisher`; does nothing if it is not subscribed. The same guarantee as
    /// ``unsubscribeDelegate(_:)``: once it returns, `publisher` is not called again.
    ///
    /// - Parameter publisher: The listener to remove.
    public func unsubscribeEventPublisher(_ publisher: any AuthSessionDelegateEventPublisher) {
        unsubscribe(Subscription.ID(object: ObjectIdentifier(publisher), kind: .publisher))
    }

    /// Registers the subscription and enqueues its first callback (the status now) in the same
    /// critical section, so that it comes before every later step's callbacks.
    ///
    /// The session passed with that callback is read just before (reading it calls the provider).
    private func subscribe(_ subscription: Subscription, of subscriber: AnyObject, on queue: DispatchQueue) {
        let session = sessionProvider.session
        let sweeps = state.withLock { state in
            let subscription = state.subscribers.subscribe(subscription, of: subscriber, queue: queue)
            let delivery = makeDelivery([.observationStarted(state.machine.status)], session: session)
            queue.async { delivery.run(for: subscription) }
            return state.subscribers.takeSweepTurn()
        }
        if sweeps {
            removeDeallocatedSubscribers()
        }
    }

    /// Cancels the subscription under the lock, then waits, unlocked, for a callback of it that is
    /// running on another thread.
    private func unsubscribe(_ id: Subscription.ID) {
        let removed = state.withLock { $0.subscribers.unsubscribe(id) }
        removed?.waitForDeliveryInProgress()
    }

    /// The number of live subscriptions (delegates and publishers).
    var subscriberCount: Int {
        removeDeallocatedSubscribers()
        return state.withLock { $0.subscribers.count }
    }

    /// Drops the subscriptions whose subscriber was deallocated.
    ///
    /// Liveness is checked outside the lock: checking briefly holds each subscriber strongly,
    /// and the last release of one may run its `deinit`, which may call back into the handle.
    func removeDeallocatedSubscribers() {
        let subscriptions = state.withLock { Array($0.subscribers.entries.map(\.subscription)) }
        let deallocated = subscriptions.filter { !$0.isAlive }
        guard !deallocated.isEmpty else { return }
        state.withLock { state in
            for subscription in deallocated {
                state.subscribers.remove(subscription)
            }
        }
    }

    /// Hands the notifications among `actions` to every subscriber and async-sequence consumer,
    /// and returns the rest.
    ///
    /// Called with the lock held: enqueuing is not a call-out, and doing it here is what keeps
    /// every subscriber's view of the status a chain.
    /// An observation model is given every step, even one that notifies nothing: a step may
    /// change what it shows (the manual-authentication flag, the user) without a callback.
    ///
    /// - Parameters:
    ///   - session: The provider's session read for the step.
    ///   - user: The user read for the step, for an observation model.
    ///   - state: The handle's state after the step.
    func dispatch(
        _ actions: [SessionAction],
        session: (any AuthSessionProtocol)?,
        user: (any AuthSessionUserProtocol)?,
        in state: HandleState
    ) -> [SessionAction] {
        let hasObservers = !state.subscribers.isEmpty || !state.streams.isEmpty
        var notifications: [SessionNotification] = []
        var effects: [SessionAction] = []
        if hasObservers {
            notifications.reserveCapacity(actions.count)
        }
        for action in actions {
            if case .notify(let notification) = action {
                if hasObservers {
                    notifications.append(notification)
                }
            } else {
                effects.append(action)
            }
        }
        if !state.streams.isEmpty {
            state.streams.yield(notifications, update: Self.observationUpdate(notifications, user: user, state: state))
        }
        guard !notifications.isEmpty, !state.subscribers.isEmpty else { return effects }

        let delivery = makeDelivery(notifications, session: session)
        for entry in state.subscribers.entries {
            let subscription = entry.subscription
            entry.queue.async { delivery.run(for: subscription) }
        }
        return effects
    }

    /// One step's callbacks, ready for any subscriber's queue.
    private func makeDelivery(
        _ notifications: [SessionNotification],
        session: (any AuthSessionProtocol)?
    ) -> NotificationDelivery {
        NotificationDelivery(
            notifications: notifications,
            session: session,
            handle: { [weak self] in self },
            removeSubscription: { [weak self] subscription in
                self?.state.withLock { $0.subscribers.remove(subscription) }
            }
        )
    }

    /// The step as an observation model sees it: the state after it, the user as the step saw it
    /// (read unlocked, before the step), and the errors it reported.
    static func observationUpdate(
        _ notifications: [SessionNotification],
        user: (any AuthSessionUserProtocol)?,
        state: HandleState
    ) -> ObservationUpdate {
        var errors: [AuthSessionError] = []
        for case .failure(let error) in notifications {
            errors.append(error)
        }
        return ObservationUpdate(
            status: state.machine.status,
            isManualAuthenticationRequired: state.machine.isManualAuthenticationRequired,
            user: user,
            errors: errors
        )
    }
}
