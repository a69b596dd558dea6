import AuthSessionInterface
import Dispatch

extension AuthSessionHandle {

    /// Subscribes `delegate` to every future callback, delivered asynchronously on `queue`.
    ///
    /// The delegate is held weakly and never needs to unsubscribe. Subscribing it again keeps one
    /// subscription and moves it to the new queue (callbacks already enqueued on the old queue
    /// still run there, so order across the move is not guaranteed). On a serial queue the
    /// callbacks arrive in the order of the changes; status changes form a chain.
    ///
    /// - Parameters:
    ///   - delegate: The observer.
    ///   - queue: Where its callbacks run, for example `.main`.
    public func subscribeDelegate(_ delegate: any AuthSessionDelegate, receive queue: DispatchQueue) {
        subscribe(Subscription(delegate: delegate), of: delegate, on: queue)
    }

    /// Stops callbacks to `delegate`, including those already enqueued; does nothing if it is not
    /// subscribed.
    ///
    /// - Parameter delegate: The observer to remove.
    public func unsubscribeDelegate(_ delegate: any AuthSessionDelegate) {
        unsubscribe(Subscription.ID(object: ObjectIdentifier(delegate), kind: .delegate))
    }

    /// Subscribes a private listener: `publisher` receives every delegate callback as an
    /// `AuthSessionDelegateEvent`, asynchronously on `queue`, in the same
    /// order delegates see them.
    ///
    /// Held weakly, like a delegate. Pair it with ``SessionDelegateEventProxy`` to react on the
    /// main actor through a closure without exposing delegate methods.
    ///
    /// - Parameters:
    ///   - publisher: The listener.
    ///   - queue: Where `publish(_:for:)` is called; the main queue unless you say otherwise.
    public func subscribeEventPublisher(
        _ publisher: any AuthSessionDelegateEventPublisher,
        receive queue: DispatchQueue = .main
    ) {
        subscribe(Subscription(publisher: publisher), of: publisher, on: queue)
    }

    /// Stops events to `publisher`, including those already enqueued; does nothing if it is not
    /// subscribed.
    ///
    /// - Parameter publisher: The listener to remove.
    public func unsubscribeEventPublisher(_ publisher: any AuthSessionDelegateEventPublisher) {
        unsubscribe(Subscription.ID(object: ObjectIdentifier(publisher), kind: .publisher))
    }

    private func subscribe(_ subscription: Subscription, of subscriber: AnyObject, on queue: DispatchQueue) {
        state.withLock { $0.subscribers.subscribe(subscription, of: subscriber, queue: queue) }
        removeDeallocatedSubscribers()
    }

    private func unsubscribe(_ id: Subscription.ID) {
        state.withLock { $0.subscribers.unsubscribe(id) }
        removeDeallocatedSubscribers()
    }

    /// The number of live subscriptions (delegates and publishers).
    var subscriberCount: Int {
        removeDeallocatedSubscribers()
        return state.withLock { $0.subscribers.entries.count }
    }

    /// Drops the subscriptions whose subscriber was deallocated.
    ///
    /// Liveness is checked outside the lock: checking briefly holds each subscriber strongly,
    /// and the last release of one may run its `deinit`, which may call back into the handle.
    func removeDeallocatedSubscribers() {
        let subscriptions = state.withLock { $0.subscribers.entries.map(\.subscription) }
        let deallocated = subscriptions.filter { !$0.isAlive }
        guard !deallocated.isEmpty else { return }
        state.withLock { state in
            for subscription in deallocated {
                state.subscribers.remove(subscription)
            }
        }
    }

    /// Enqueues the notifications among `actions` for every subscriber, yields them to every
    /// async-sequence consumer, and returns the rest.
    ///
    /// Called with the lock held: enqueuing is not a call-out, and doing it here is what keeps
    /// every subscriber's view of the status a chain.
    /// - Parameters:
    ///   - session: The provider's session read for the step.
    ///   - state: The handle's state after the step.
    ///   - manualChanged: Whether the step changed the manual-authentication flag (a change no
    ///     notification carries, but an observation model shows).
    func dispatch(
        _ actions: [SessionAction],
        session: AuthSessionProvider.AuthSession?,
        in state: HandleState,
        manualChanged: Bool
    ) -> [SessionAction] {
        let subscribers = state.subscribers
        let streams = state.streams
        var notifications: [SessionNotification] = []
        var effects: [SessionAction] = []
        for action in actions {
            if case .notify(let notification) = action {
                notifications.append(notification)
            } else {
                effects.append(action)
            }
        }
        guard !notifications.isEmpty || manualChanged else { return effects }
        if !streams.isEmpty {
            streams.yield(notifications, update: Self.observationUpdate(notifications, session: session, state: state))
        }
        guard !notifications.isEmpty else { return effects }
        guard !subscribers.entries.isEmpty else { return effects }

        let delivery = NotificationDelivery(
            notifications: notifications,
            session: session,
            handle: { [weak self] in self },
            removeSubscription: { [weak self] subscription in
                self?.state.withLock { $0.subscribers.remove(subscription) }
            }
        )
        for entry in subscribers.entries {
            let subscription = entry.subscription
            entry.queue.async { delivery.run(for: subscription) }
        }
        return effects
    }

    /// The step as an observation model sees it.
    static func observationUpdate(
        _ notifications: [SessionNotification],
        session: AuthSessionProvider.AuthSession?,
        state: HandleState
    ) -> ObservationUpdate {
        var user: (any AuthSessionUserProtocol)? = session?.user
        var errors: [AuthSessionError] = []
        for notification in notifications {
            switch notification {
            case .userUpdated(let updated): user = updated?.user
            case .failure(let error): errors.append(error)
            default: break
            }
        }
        return ObservationUpdate(
            status: state.machine.status,
            isManualAuthenticationRequired: state.machine.isManualAuthenticationRequired,
            user: user,
            errors: errors
        )
    }

    /// Performs, in order, the actions that call out of the handle; never with the lock held.
    func perform(_ effects: [SessionAction]) {
        for effect in effects {
            switch effect {
            case .notify:
                preconditionFailure("notifications are enqueued under the lock")
            case .presentBiometricPrompt(let id):
                presentBiometricPrompt(id)
            case .signOut(let reason):
                signOut(reason)
            }
        }
    }
}
