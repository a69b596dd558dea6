import AuthSessionInterface
import Dispatch

/// One subscriber of a handle, held weakly; cancelled when it unsubscribes.
///
/// A delivery already enqueued on the subscriber's queue resolves the subscription when it runs,
/// and holds the subscription's ``DeliveryLock`` while it calls the subscriber, so that
/// ``cancel()`` followed by ``waitForDeliveryInProgress()`` means: the subscriber is never called
/// again, and no call of it is still running.
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
    /// Held while a callback of this subscription runs.
    let deliveryLock = DeliveryLock()

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

    /// Stops all deliveries that have not started, including those already enqueued.
    func cancel() {
        weakTarget.withLock { $0 = nil }
    }

    /// Returns once no callback of this subscription is running (see ``DeliveryLock``).
    func waitForDeliveryInProgress() {
        deliveryLock.waitForDeliveryInProgress()
    }
}

/// The subscribers of one handle, in subscription order.
///
/// Subscribing, unsubscribing and removing are O(1) amortised: entries are found through an index
/// by identity, removed ones leave a hole, and the holes are compacted away once they outnumber
/// the entries.
///
/// Not thread-safe: lives in the handle's locked state. Never resolves a subscriber (which
/// would hold it strongly under the lock); liveness is checked by the handle outside the lock.
struct SubscriberRegistry {

    struct Entry {
        let subscription: Subscription
        var queue: DispatchQueue
    }

    /// In subscription order; `nil` where an entry was removed.
    private var slots: [Entry?] = []
    private var indexByID: [Subscription.ID: Int] = [:]
    /// Subscriptions made since the last sweep of deallocated subscribers.
    private var subscriptionsSinceSweep = 0
    /// How many slots subscribing, unsubscribing and compacting have looked at: the work a test
    /// can bound without a clock.
    private(set) var probeCount = 0

    /// The number of entries.
    var count: Int { indexByID.count }

    var isEmpty: Bool { indexByID.isEmpty }

    /// Every entry, in subscription order, without copying the list.
    var entries: LazyMapSequence<LazyFilterSequence<LazyMapSequence<[Entry?], Entry?>>, Entry> {
        slots.lazy.compactMap { $0 }
    }

    /// Adds `subscription` on `queue`; a subscriber already present keeps its place and
    /// moves to `queue`.
    ///
    /// An entry with the same identity whose subscriber is gone is replaced: a new object may be
    /// allocated at the address of one that was deallocated without unsubscribing.
    ///
    /// - Parameter object: The subscriber, held strongly by the caller for the call.
    /// - Returns: The subscription in effect.
    @discardableResult
    mutating func subscribe(_ subscription: Subscription, of object: AnyObject, queue: DispatchQueue) -> Subscription {
        probeCount += 1
        subscriptionsSinceSweep += 1
        guard let index = indexByID[subscription.id], let existing = slots[index] else {
            indexByID[subscription.id] = slots.count
            slots.append(Entry(subscription: subscription, queue: queue))
            return subscription
        }
        if existing.subscription.refers(to: object) {
            slots[index]?.queue = queue
            return existing.subscription
        }
        slots[index] = Entry(subscription: subscription, queue: queue)
        return subscription
    }

    /// Removes and cancels the subscriber with `id`, if present.
    ///
    /// - Returns: The subscription removed, to wait for a delivery in progress (unlocked).
    mutating func unsubscribe(_ id: Subscription.ID) -> Subscription? {
        probeCount += 1
        guard let index = indexByID.removeValue(forKey: id), let entry = slots[index] else { return nil }
        slots[index] = nil
        entry.subscription.cancel()
        compactIfSparse()
        return entry.subscription
    }

    /// Removes `subscription` (found deallocated), if it is still the one in effect.
    mutating func remove(_ subscription: Subscription) {
        probeCount += 1
        guard let index = indexByID[subscription.id], slots[index]?.subscription === subscription else { return }
        indexByID[subscription.id] = nil
        slots[index] = nil
        compactIfSparse()
    }

    /// Whether enough subscriptions were made since the last sweep that sweeping every entry for
    /// deallocated subscribers costs O(1) per subscription; resets the count when it answers yes.
    mutating func takeSweepTurn() -> Bool {
        guard subscriptionsSinceSweep >= max(64, count) else { return false }
        subscriptionsSinceSweep = 0
        probeCount += count
        return true
    }

    private mutating func compactIfSparse() {
        let holes = slots.count - indexByID.count
        guard holes > 32 && holes > indexByID.count else { return }
        probeCount += slots.count
        let live = slots.compactMap { $0 }
        slots = live
        indexByID = Dictionary(uniqueKeysWithValues: live.enumerated().map { ($1.subscription.id, $0) })
    }
}
