import AuthSessionInterface
import Dispatch

/// One subscriber of a handle, held weakly; cancelled when it unsubscribes.
///
/// A delivery already enqueued on the subscriber's queue resolves the subscription when it runs,
/// so nothing reaches a subscriber after it unsubscribed or was deallocated.
///
/// All operations are thread-safe.
final class Subscription: Sendable {

    /// What a subscription can point at.
    enum Kind: Hashable, Sendable {
        case delegate
        case publisher
    }

    /// A subscriber that is still alive.
    enum Target {
        case delegate(any AuthSessionDelegate)
        case publisher(any AuthSessionDelegateEventPublisher)
    }

    private struct WeakTarget: Sendable {
        weak var delegate: (any AuthSessionDelegate)?
        weak var publisher: (any AuthSessionDelegateEventPublisher)?

        var target: Target? {
            if let delegate { return .delegate(delegate) }
            if let publisher { return .publisher(publisher) }
            return nil
        }
    }

    /// The subscriber's identity: its object and what it subscribed as.
    struct ID: Hashable, Sendable {
        let object: ObjectIdentifier
        let kind: Kind
    }

    let id: ID
    /// `nil` once cancelled.
    private let weakTarget: ConcurrencySafeContainer<WeakTarget?>

    init(delegate: any AuthSessionDelegate) {
        id = ID(object: ObjectIdentifier(delegate), kind: .delegate)
        weakTarget = ConcurrencySafeContainer(WeakTarget(delegate: delegate))
    }

    init(publisher: any AuthSessionDelegateEventPublisher) {
        id = ID(object: ObjectIdentifier(publisher), kind: .publisher)
        weakTarget = ConcurrencySafeContainer(WeakTarget(publisher: publisher))
    }

    /// A delegate subscription under a given identity: what a subscription of a deallocated
    /// delegate looks like once a new object occupies its address.
    init(delegate: any AuthSessionDelegate, id: ID) {
        self.id = id
        weakTarget = ConcurrencySafeContainer(WeakTarget(delegate: delegate))
    }

    /// The subscriber, or `nil` if it unsubscribed or was deallocated.
    ///
    /// Never read with the handle's lock held: the strong reference it returns may be the last
    /// one, and releasing it runs the subscriber's `deinit`.
    var target: Target? {
        weakTarget.withLock { $0?.target }
    }

    /// Whether the subscriber is still subscribed and alive. The same caveat as ``target``.
    var isAlive: Bool {
        target != nil
    }

    /// Whether this subscription points at `object`.
    ///
    /// Safe under the handle's lock: the subscriber is either `object`, which the caller holds
    /// strongly, or gone, so no last reference is released here.
    func refers(to object: AnyObject) -> Bool {
        weakTarget.withLock { weakTarget in
            guard let weakTarget else { return false }
            if let delegate = weakTarget.delegate { return delegate === object }
            if let publisher = weakTarget.publisher { return publisher === object }
            return false
        }
    }

    /// Stops all deliveries, including those already enqueued.
    func cancel() {
        weakTarget.withLock { $0 = nil }
    }
}

/// The subscribers of one handle, in subscription order.
///
/// Not thread-safe: lives in the handle's locked state. Never resolves a subscriber (which
/// would hold it strongly under the lock); liveness is checked by the handle outside the lock.
struct SubscriberRegistry {

    struct Entry {
        let subscription: Subscription
        var queue: DispatchQueue
    }

    private(set) var entries: [Entry] = []

    /// Adds `subscription` on `queue`; a subscriber already present keeps its place and
    /// moves to `queue`.
    ///
    /// An entry with the same identity whose subscriber is gone is replaced: a new object may be
    /// allocated at the address of one that was deallocated without unsubscribing.
    ///
    /// - Parameter object: The subscriber, held strongly by the caller for the call.
    mutating func subscribe(_ subscription: Subscription, of object: AnyObject, queue: DispatchQueue) {
        guard let index = entries.firstIndex(where: { $0.subscription.id == subscription.id }) else {
            entries.append(Entry(subscription: subscription, queue: queue))
            return
        }
        if entries[index].subscription.refers(to: object) {
            entries[index].queue = queue
        } else {
            entries[index] = Entry(subscription: subscription, queue: queue)
        }
    }

    /// Removes and cancels the subscriber with `id`, if present.
    mutating func unsubscribe(_ id: Subscription.ID) {
        guard let index = entries.firstIndex(where: { $0.subscription.id == id }) else { return }
        entries.remove(at: index).subscription.cancel()
    }

    /// Removes `subscription` (found deallocated), if present.
    mutating func remove(_ subscription: Subscription) {
        entries.removeAll { $0.subscription === subscription }
    }
}
