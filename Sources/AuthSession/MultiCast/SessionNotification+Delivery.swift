import AuthSessionInterface

/// The notifications of one step, ready to hand to any subscriber on its queue.
///
/// One object per step, shared by every subscriber's delivery: a fan-out costs one retain per
/// subscriber, not one copy.
final class NotificationDelivery: Sendable {

    let notifications: [SessionNotification]
    /// The provider's session when the step ran.
    let session: (any AuthSessionProtocol)?
    /// The handle, if it still exists when the delivery runs.
    let handle: @Sendable () -> (any AuthSessionHandleProtocol)?
    /// Drops a subscription found deallocated.
    let removeSubscription: @Sendable (Subscription) -> Void

    init(
        notifications: [SessionNotification],
        session: (any AuthSessionProtocol)?,
        handle: @escaping @Sendable () -> (any AuthSessionHandleProtocol)?,
        removeSubscription: @escaping @Sendable (Subscription) -> Void
    ) {
        self.notifications = notifications
        self.session = session
        self.handle = handle
        self.removeSubscription = removeSubscription
    }

    /// Delivers to `subscription`, and drops it if its subscriber is gone.
    func run(for subscription: Subscription) {
        if !deliver(to: subscription) {
            removeSubscription(subscription)
        }
    }

    /// Calls the subscriber once per notification, in order, holding the subscription's delivery
    /// lock (which an unsubscribe waits for) and resolving the subscriber before each call, so
    /// that an unsubscribe, from anywhere, stops the rest.
    ///
    /// - Returns: `false` if the subscriber was gone before the first notification.
    func deliver(to subscription: Subscription) -> Bool {
        let handle = handle()
        return subscription.deliveryLock.withDelivery {
            for (index, notification) in notifications.enumerated() {
                switch subscription.target {
                case nil:
                    return index > 0
                case .delegate(let delegate):
                    notification.deliver(to: delegate, handle: handle, session: session)
                case .publisher(let publisher):
                    notification.publish(to: publisher, handle: handle)
                }
            }
            return true
        }
    }
}

extension SessionNotification {

    /// The notification as an outbound `AuthSessionDelegateEvent`; `nil` for the status a new
    /// subscriber is told, which is not an event.
    var delegateEvent: AuthSessionDelegateEvent? {
        switch self {
        case .observationStarted: nil
        case .statusChanged(let oldStatus, let newStatus):
            .sessionStatusChanged(oldValue: oldStatus, newValue: newStatus)
        case .fetchCompleted(let isInitialFetch): .sessionFetch(isInitial: isInitialFetch)
        case .login: .login
        case .logout(let error): .logout(error: error)
        case .userUpdated: .userUpdate
        case .failure(let error): .failure(error: error)
        }
    }

    /// Calls the publisher: `publishCurrentStatus(_:for:)` for a new subscription's status,
    /// `publish(_:for:)` for everything else.
    func publish(to publisher: any AuthSessionDelegateEventPublisher, handle: (any AuthSessionHandleProtocol)?) {
        if case .observationStarted(let status) = self {
            publisher.publishCurrentStatus(status, for: handle)
        } else if let event = delegateEvent {
            publisher.publish(event, for: handle)
        }
    }

    /// Calls the matching `AuthSessionDelegate` method.
    func deliver(
        to delegate: any AuthSessionDelegate,
        handle: (any AuthSessionHandleProtocol)?,
        session: (any AuthSessionProtocol)?
    ) {
        switch self {
        case .observationStarted(let status):
            delegate.authentication(handle, didStartObservingWith: status, for: session)
        case .statusChanged(let oldStatus, let newStatus):
            delegate.authentication(handle, didUpdateStatus: newStatus, from: oldStatus, for: session)
        case .fetchCompleted(let isInitialFetch):
            delegate.authentication(handle, didCompleteFetchWith: session, isInitialFetch: isInitialFetch)
        case .login:
            delegate.authentication(handle, didLoginWith: session?.user, for: session)
        case .logout(let error):
            delegate.authentication(handle, didLogoutWith: error)
        case .userUpdated(let updatedSession):
            delegate.authentication(handle, didUpdate: updatedSession?.user, for: updatedSession)
        case .failure(let error):
            delegate.authentication(handle, didFailWith: error, for: session)
        }
    }
}
