import AuthSession
import AuthSessionInterface
import Foundation

// Change notices from the processes sharing the store.
extension ManagedSessionProvider {

    // MARK: - Change notices

    /// The store changed (a notice from any process sharing it, this one included): wakes the
    /// refreshes waiting for a lease, then reads the store under the write lock (so none of this
    /// process's own writes is half done) and lets the machine decide: sign out, adopt, or nothing.
    func storeChanged() {
        let effects: [ManagerEffect] = writeLock.withLock { _ in
            let found: StoreSnapshot.Stored
            do throws(SessionStoreError) {
                found = try loadForCompare()
            } catch {
                // Unreadable now (a locked device): the next notice or refresh looks again.
                return []
            }
            let now = clock.now
            return state.withLock { $0.machine.storeChanged(found, now: now) }
        }
        // After the machine's step: a refresh it ended (the rotation was adopted) leaves at once.
        // A refresh still waiting claims again unless the lease it waits for still stands (the
        // notice was that lease being recorded): a lease cleared without a rotation (its owner
        // failed) is this refresh's turn.
        if let flight = state.withLock({ $0.leaseWaiters.isEmpty ? nil : $0.machine.flight }),
            let lease = try? store.loadLease(),
            state.withLock({
                $0.machine.leaseRemaining(lease, for: flight, owner: leaseOwner, now: clock.now, uptime: clock.uptime)
                    != nil
            })
        {
            perform(effects)
            drainOutbox()
            return
        }
        wakeLeaseWaiters(afterNotice: true)
        perform(effects)
        drainOutbox()
    }
}
