import AuthSessionRedaction
import Dispatch
import Foundation

extension AuthSessionHandleProtocol {

    /// Subscribes a main-actor `delegate` to every future callback, delivered on the main actor.
    ///
    /// Held weakly, like any delegate; subscribing it again keeps one subscription. Its first
    /// callback is `authentication(_:didStartObservingWith:for:)`. Works with any conformer of
    /// this protocol: the delegate is reached through a small `AuthSessionDelegate` that the
    /// package keeps for as long as `delegate` lives, subscribed on the main queue.
    ///
    /// - Parameter delegate: The observer.
    public func subscribeDelegate(_ delegate: any MainActorAuthSessionDelegate) {
        subscribeDelegate(MainActorDelegateAdapters.adapter(for: delegate, of: self), receive: .main)
    }

    /// Stops callbacks to a main-actor `delegate`; does nothing if it is not subscribed.
    ///
    /// Called on the main actor, no callback of `delegate` runs after it returns.
    ///
    /// - Parameter delegate: The observer to remove.
    public func unsubscribeDelegate(_ delegate: any MainActorAuthSessionDelegate) {
        if let adapter = MainActorDelegateAdapters.remove(delegate, of: self) {
            unsubscribeDelegate(adapter)
        }
    }
}

/// The delegates that stand in for main-actor delegates, one per (handle, delegate) pair, kept
/// for as long as both live.
enum MainActorDelegateAdapters {

    private struct Key: Hashable {
        let handle: ObjectIdentifier
        let delegate: ObjectIdentifier
    }

    private struct Table {
        var adapters: [Key: MainActorDelegateAdapter] = [:]
        /// The table is swept of dead pairs when it grows past this, which keeps sweeping
        /// amortised O(1) per subscription.
        var sweepThreshold = 16
    }

    private static let table = RedactionLock(Table())

    /// The adapter for `delegate` on `handle`, created if needed.
    static func adapter(
        for delegate: any MainActorAuthSessionDelegate,
        of handle: some AuthSessionHandleProtocol
    ) -> MainActorDelegateAdapter {
        let key = Key(handle: ObjectIdentifier(handle), delegate: ObjectIdentifier(delegate))
        // `stands(for:of:)` under the lock is safe: it compares with objects the caller holds.
        let (adapter, replaced, candidates) = table.withLock {
            table -> (MainActorDelegateAdapter, MainActorDelegateAdapter?, [MainActorDelegateAdapter]) in
            if let existing = table.adapters[key], existing.stands(for: delegate, of: handle) {
                return (existing, nil, [])
            }
            // A pair that died may have left its identifiers to new objects: replace it.
            let adapter = MainActorDelegateAdapter(delegate: delegate, handle: handle)
            let replaced = table.adapters.updateValue(adapter, forKey: key)
            guard table.adapters.count > table.sweepThreshold else { return (adapter, replaced, []) }
            table.sweepThreshold = max(16, table.adapters.count * 2)
            return (adapter, replaced, Array(table.adapters.values))
        }
        _ = replaced  // released here, outside the lock
        sweep(candidates)
        return adapter
    }

    /// Drops the adapters whose delegate or handle is gone.
    ///
    /// Liveness is checked with no lock held: checking holds the delegate and the handle
    /// strongly for a moment, and if that was the last reference their `deinit` runs here, and
    /// may call back into this table.
    private static func sweep(_ candidates: [MainActorDelegateAdapter]) {
        let dead = candidates.filter { !$0.isAlive }
        guard !dead.isEmpty else { return }
        let removed = table.withLock { table in
            dead.compactMap { adapter in
                table.adapters.first { $0.value === adapter }.flatMap { table.adapters.removeValue(forKey: $0.key) }
            }
        }
        _ = removed
    }

    /// Removes and returns the adapter for `delegate` on `handle`, if it stands for them.
    static func remove(
        _ delegate: any MainActorAuthSessionDelegate,
        of handle: some AuthSessionHandleProtocol
    ) -> MainActorDelegateAdapter? {
        let key = Key(handle: ObjectIdentifier(handle), delegate: ObjectIdentifier(delegate))
        return table.withLock { table in
            guard let adapter = table.adapters[key], adapter.stands(for: delegate, of: handle) else { return nil }
            table.adapters[key] = nil
            return adapter
        }
    }

    /// Forgets `adapter`, whose delegate is gone.
    static func discard(_ adapter: MainActorDelegateAdapter) {
        let released = table.withLock { table in
            table.adapters.first { $0.value === adapter }.flatMap { table.adapters.removeValue(forKey: $0.key) }
        }
        _ = released
    }

    /// How many adapters are kept for `handle`; for tests.
    static func count(for handle: some AuthSessionHandleProtocol) -> Int {
        let id = ObjectIdentifier(handle)
        return table.withLock { $0.adapters.keys.filter { $0.handle == id }.count }
    }
}

/// An `AuthSessionDelegate` that hands each callback to a main-actor delegate, on the main actor.
///
/// Subscribed on the main queue, so each callback is forwarded synchronously, inside the
/// delivery that an unsubscribe waits for.
final class MainActorDelegateAdapter: AuthSessionDelegate {

    private struct Targets: Sendable {
        weak var delegate: (any MainActorAuthSessionDelegate)?
        weak var handle: (any AuthSessionHandleProtocol)?
    }

    private let targets: RedactionLock<Targets>

    init(delegate: any MainActorAuthSessionDelegate, handle: any AuthSessionHandleProtocol) {
        targets = RedactionLock(Targets(delegate: delegate, handle: handle))
    }

    /// Whether this adapter is for exactly these objects (not older ones at the same addresses).
    func stands(for delegate: any MainActorAuthSessionDelegate, of handle: any AuthSessionHandleProtocol) -> Bool {
        targets.withLock { $0.delegate === delegate && $0.handle === handle }
    }

    /// Whether the delegate and the handle both still exist. Holds them strongly for a moment:
    /// never call it with a lock held (their last release may run their `deinit`).
    var isAlive: Bool {
        let (delegate, handle) = targets.withLock { ($0.delegate, $0.handle) }
        return delegate != nil && handle != nil
    }

    private func forward(_ callback: @escaping @MainActor @Sendable (any MainActorAuthSessionDelegate) -> Void) {
        guard let delegate = targets.withLock({ $0.delegate }) else {
            MainActorDelegateAdapters.discard(self)
            return
        }
        if MainQueue.isCurrent {
            MainActor.assumeIsolated { callback(delegate) }
        } else {
            // Only a conformer that ignores the queue it was given gets here.
            DispatchQueue.main.async { MainActor.assumeIsolated { callback(delegate) } }
        }
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        forward { $0.authentication(sessionHandle, didStartObservingWith: sessionStatus, for: session) }
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didCompleteFetchWith session: (any AuthSessionProtocol)?,
        isInitialFetch: Bool
    ) {
        forward { $0.authentication(sessionHandle, didCompleteFetchWith: session, isInitialFetch: isInitialFetch) }
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        forward { $0.authentication(sessionHandle, didUpdateStatus: sessionStatus, from: oldStatus, for: session) }
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didLoginWith user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {
        forward { $0.authentication(sessionHandle, didLoginWith: user, for: session) }
    }

    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {
        forward { $0.authentication(sessionHandle, didLogoutWith: error) }
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdate user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {
        forward { $0.authentication(sessionHandle, didUpdate: user, for: session) }
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didFailWith error: AuthSessionError,
        for session: (any AuthSessionProtocol)?
    ) {
        forward { $0.authentication(sessionHandle, didFailWith: error, for: session) }
    }
}
