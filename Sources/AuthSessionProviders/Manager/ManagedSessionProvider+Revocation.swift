import AuthSession
import AuthSessionInterface
import Foundation

// Revocation at the server, and the revocations kept until the server hears them.
extension ManagedSessionProvider {

    /// Revokes `token` at the server in the background; a refresh token the server did not hear
    /// is kept as a ``PendingRevocation`` recording `origin` (the session's it came from; the
    /// backend's when `nil`), so it is only ever sent to where it was issued.
    func revokeInBackground(_ token: String, kind: TokenKind, origin: SessionOrigin? = nil) {
        let origin = origin ?? remote.sessionOrigin
        beginOperation()
        let remote = remote
        Task { [self] in
            do throws(RemoteAuthError) {
                try await remote.revoke(token, kind: kind)
                instrumentation.delivery.send(.revocation(kind, .revoked(isRetry: false)))
            } catch  where error.kind == .transient {
                instrumentation.delivery.send(.revocation(kind, .pending(error)))
                if kind == .refreshToken {
                    let now = clock.now.timeIntervalSince1970
                    let record = PendingRevocation(
                        token: token,
                        kind: kind,
                        recordedAt: now,
                        notAfter: now + configuration.pendingRevocationLifetime,
                        origin: origin
                    )
                    await onOwnThread { [self] in keepPendingRevocation(record) }
                }
            } catch {
                instrumentation.delivery.send(.revocation(kind, .failed(error)))
            }
            endOperation()
        }
    }

    /// Records `record` with the store's pending revocations (inside its exclusive access), and
    /// in memory for a store that keeps none. Blocks: call it on a thread of its own.
    func keepPendingRevocation(_ record: PendingRevocation) {
        state.withLock { state in
            if !state.pendingRevocations.contains(where: { $0.token == record.token }) {
                state.pendingRevocations.append(record)
            }
        }
        _ = try? store.withExclusiveAccess {
            var kept = try store.loadPendingRevocations()
            guard !kept.contains(where: { $0.token == record.token }) else { return }
            kept.append(record)
            try store.savePendingRevocations(kept)
        }
    }

    /// Makes again the revocations that could not reach the server before, by this process or
    /// another sharing the store (a sign-out while offline, say): each is made once now, and
    /// removed when the server revoked the token or refused for good; one still unreachable
    /// stays for the next try (the next launch or activation, or another call of this method).
    /// One kept until its token could no longer be valid is given up. Each outcome is reported
    /// to the observers (``ManagedSessionObservation/revocation(_:_:)``).
    ///
    /// The manager calls it by itself after the launch read the store and at each activation; a
    /// command-line tool that signed out offline calls it (or waits for it with
    /// ``waitUntilIdle()``) before it exits to know where things stand.
    ///
    /// - Returns: How many revocations are still pending.
    @discardableResult
    public func revokePendingTokens() async -> Int {
        await revocationRound().value
    }

    /// The round of pending revocations running now, or a new one: one at a time, and a caller
    /// that comes while one runs waits for that one. Counted as an operation from its start, so
    /// that ``waitUntilIdle()`` waits for it.
    func revocationRound() -> Task<Int, Never> {
        state.withLock { locked -> Task<Int, Never> in
            if let running = locked.revocationRound { return running }
            beginOperationLocked(&locked)
            let round = Task { [self] in
                let remaining = await makePendingRevocations()
                state.withLock { $0.revocationRound = nil }
                endOperation()
                return remaining
            }
            locked.revocationRound = round
            return round
        }
    }

    /// One round of ``revokePendingTokens()``.
    func makePendingRevocations() async -> Int {
        // Nothing pending (nearly always): the round ends without starting a thread.
        if hasNothingPendingAtAGlance() { return 0 }
        let now = clock.now.timeIntervalSince1970
        let (due, expired) = await onOwnThread { [self] in takeDueRevocations(now: now) }
        for record in expired {
            instrumentation.delivery.send(.revocation(record.kind, .expired))
        }
        // A token issued to another client or server is left for a manager configured for it
        // (another app of the group, the next version): sent here, it would be refused, or
        // handed to a server that never issued it.
        let origin = remote.sessionOrigin
        for record in due where Self.isOurs(record.origin, configured: origin) {
            do throws(RemoteAuthError) {
                try await remote.revoke(record.token, kind: record.kind)
                instrumentation.delivery.send(.revocation(record.kind, .revoked(isRetry: true)))
                await onOwnThread { [self] in forgetPendingRevocation(record.token) }
            } catch  where error.kind == .transient {
                instrumentation.delivery.send(.revocation(record.kind, .pending(error)))
            } catch {
                instrumentation.delivery.send(.revocation(record.kind, .failed(error)))
                await onOwnThread { [self] in forgetPendingRevocation(record.token) }
            }
        }
        return await onOwnThread { [self] in pendingRevocationsNow().count }
    }

    /// The pending revocations, from the store and memory; expired ones removed (and returned).
    func takeDueRevocations(now: TimeInterval) -> (due: [PendingRevocation], expired: [PendingRevocation]) {
        let inMemory = state.withLock { $0.pendingRevocations }
        // A look first, without the exclusive access: with nothing pending (nearly always) the
        // round takes no turn at the store.
        let peeked = (try? store.loadPendingRevocations()) ?? []
        guard !peeked.isEmpty || !inMemory.isEmpty else { return ([], []) }
        let stored =
            (try? store.withExclusiveAccess { () throws -> [PendingRevocation] in
                let kept = try store.loadPendingRevocations()
                let live = kept.filter { $0.notAfter > now }
                if live.count != kept.count { try store.savePendingRevocations(live) }
                return kept
            }) ?? []
        var all: [PendingRevocation] = []
        for record in stored + inMemory where !all.contains(where: { $0.token == record.token }) {
            all.append(record)
        }
        state.withLock { $0.pendingRevocations.removeAll { $0.notAfter <= now } }
        return (all.filter { $0.notAfter > now }, all.filter { $0.notAfter <= now })
    }

    /// Removes the pending revocation of `token`, from the store and memory.
    func forgetPendingRevocation(_ token: String) {
        state.withLock { $0.pendingRevocations.removeAll { $0.token == token } }
        _ = try? store.withExclusiveAccess {
            let kept = try store.loadPendingRevocations()
            let rest = kept.filter { $0.token != token }
            if rest.count != kept.count { try store.savePendingRevocations(rest) }
        }
    }

    /// The pending revocations now, from the store and memory.
    func pendingRevocationsNow() -> [PendingRevocation] {
        let inMemory = state.withLock { $0.pendingRevocations }
        // A read: the store replaces its record whole.
        let stored = (try? store.loadPendingRevocations()) ?? []
        var all: [PendingRevocation] = []
        for record in stored + inMemory where !all.contains(where: { $0.token == record.token }) {
            all.append(record)
        }
        return all
    }

    /// After the launch read the store, and at each activation: the revocations put off before
    /// are made again, in the background (not by a read-only process: the app makes them).
    func retryPendingRevocationsInBackground() {
        guard configuration.role == .full else { return }
        // Nothing pending (nearly always): no task at all, at a launch or an activation.
        guard !hasNothingPendingAtAGlance() else { return }
        _ = revocationRound()
    }

    /// Whether a look that never waits finds no revocation pending, in memory or in a store whose
    /// look is a plain file read (``QuickPendingRevocationsLook``); `false` when only a look that
    /// may wait (a Keychain query) could tell, which then runs on a thread of its own.
    func hasNothingPendingAtAGlance() -> Bool {
        guard store is any QuickPendingRevocationsLook, state.withLock({ $0.pendingRevocations.isEmpty }) else {
            return false
        }
        return ((try? store.loadPendingRevocations()) ?? []).isEmpty
    }
}
