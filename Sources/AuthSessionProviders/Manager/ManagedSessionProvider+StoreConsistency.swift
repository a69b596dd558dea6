import AuthSession
import AuthSessionInterface
import Foundation

// Keeping the store and the runtime session one: compares before writes, write-backs over unreadable bytes, removals a sign-out deferred.
extension ManagedSessionProvider {

    /// A load for a compare, made inside the store's exclusive access.
    func loadForCompare() throws(SessionStoreError) -> StoreSnapshot.Stored {
        do throws(SessionStoreError) {
            return .session(try usable(store.load()))
        } catch .corrupt {
            return .unreadable
        } catch .issuedToAnotherClient {
            // Another configuration's session (an extension set up for another client signed
            // in): none of this manager's, so this one's is no longer stored; it is left alone.
            return .session(nil)
        }
    }

    /// Writes the runtime session back over unreadable bytes the store set aside, on a thread of
    /// its own (it takes the store's exclusive access), if the store still holds nothing readable
    /// and the session is still the one of `generation`: a session another process wrote back
    /// first, or signed in, is what a later notice brings; a removal (a sign-out elsewhere) is not
    /// undone.
    func writeBack(generation: UInt64) {
        beginOperation()
        RefreshThread.start(named: "AuthSessionKit.writeBack") { [self] in
            withBackgroundTask("AuthSessionKit.writeBack") { time in
                guard !time.hasExpired else { return }
                _ = try? store.withExclusiveAccess {
                    writeLock.withLock { _ in
                        guard
                            let session = state.withLock({
                                $0.machine.generation == generation ? $0.machine.session : nil
                            }),
                            case .unreadable? = try? loadForCompare()
                        else { return }
                        do throws(SessionStoreError) {
                            try store.save(session)
                        } catch {
                            let reported = AuthSessionError.sessionFetchFailed(
                                error: ManagedSessionError.storage(error)
                            )
                            state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
                        }
                    }
                }
            }
            drainOutbox()
            endOperation()
        }
    }

    func compareAndRewrite(generation: UInt64) -> [ManagerEffect] {
        guard
            let (unsaved, over) = state.withLock({ state in
                state.machine.generation == generation && state.machine.isSessionUnsaved
                    ? state.machine.session.map { ($0, state.machine.unsavedOver) } : nil
            })
        else { return [] }
        do throws(SessionStoreError) {
            let stored: ManagedSession?
            switch try loadForCompare() {
            case .unreadable:
                // Bytes that are no session, set aside by the store: the pending session is the
                // one to keep, and is written.
                try store.save(unsaved)
                return state.withLock { $0.machine.rewritten(generation: generation, error: nil) }
            case .session(let session):
                stored = session
            }
            if stored?.refreshToken == over {
                try store.save(unsaved)
                return state.withLock { $0.machine.rewritten(generation: generation, error: nil) }
            }
            if let stored, stored.isSameIdentity(as: unsaved) {
                return state.withLock { $0.machine.adopted(stored, generation: generation) }
            }
            return [.signOut(error: .signedOutElsewhere, generation: generation)]
        } catch {
            return state.withLock { $0.machine.rewritten(generation: generation, error: error) }
        }
    }

    /// Removes the stored session a sign-out could not remove (the store was locked or busy), if it
    /// is still that sign-in's and nobody signed in since, inside the store's exclusive access (so
    /// that no other process's compare-and-save interleaves). Returns at once if another process
    /// holds the access: the next activation, or the sign-out's own worker, tries again.
    func removePendingSession() {
        guard state.withLock({ $0.machine.session == nil && $0.pendingRemoval != nil }) else { return }
        let attempt = try? store.withExclusiveAccessIfAvailable {
            writeLock.withLock { _ in removePendingSessionLocked() }
        }
        if attempt == nil {
            // The access is held (or cannot be tried): a worker waits for it.
            removePendingSessionWhenAvailable(revoking: nil)
        }
    }

    /// The removal, inside the store's exclusive access and the write lock.
    ///
    /// - Returns: The stored session removed, if any.
    @discardableResult
    func removePendingSessionLocked(reportsFailure: Bool = false) -> ManagedSession? {
        guard let pending = state.withLock({ $0.machine.session == nil ? $0.pendingRemoval : nil }) else { return nil }
        do throws(SessionStoreError) {
            var removed: ManagedSession?
            if let stored = try loadOurs(), pending.matches(stored) {
                try store.remove()
                removed = stored
            }
            state.withLock { $0.pendingRemoval = nil }
            return removed
        } catch .corrupt {
            state.withLock { $0.pendingRemoval = nil }
        } catch {
            // Still locked: the next activation tries again. The sign-out that deferred it reports
            // the failure (once).
            if reportsFailure {
                let reported = AuthSessionError.signingOutFailure(error: ManagedSessionError.storage(error))
                state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
            }
        }
        return nil
    }
}
