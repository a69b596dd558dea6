import AuthSession
import AuthSessionInterface
import Foundation

// Sign-out: the runtime session first, then the store (now, or when its exclusive access is free).
extension ManagedSessionProvider {

    // MARK: - Sign-out, credential state, revocation

    /// Signs out if `ifGeneration` (when given) is still current: the runtime session, then the
    /// store (unless `removing` says it holds another session), then the event; then, if
    /// `revokes`, the backend.
    ///
    /// The store's part runs inside its exclusive access, so that a process sharing the store
    /// cannot write its own commit over the removal. The call never waits for that access: when
    /// another process holds it (for microseconds, or suspended there), this process signs out at
    /// once and a thread of its own removes the stored session when the access is released.
    ///
    /// - Returns: The store's error, if the stored session could not be removed now.
    func performSignOut(
        error: (any Error)?,
        reason: ManagedSessionError?,
        ifGeneration: UInt64?,
        revokes: Bool,
        removing: StoredSessionRemoval = .thisUser
    ) -> SessionStoreError? {
        // Rendered now, outside every lock, while the session's tokens are still registered for
        // redaction: the stream and the observer print this text, never the error anew.
        let cause = SignOutCause(error: error)
        let step = { (removesNow: Bool) in
            self.writeLock.withLock { _ in
                self.signOutLocked(
                    error: error,
                    cause: cause,
                    reason: reason,
                    ifGeneration: ifGeneration,
                    removing: removing,
                    removesNow: removesNow
                )
            }
        }
        var outcome: SignOutOutcome?
        var isDeferred = false
        do {
            if let attempt = try store.withExclusiveAccessIfAvailable({ step(true) }) {
                outcome = attempt
            } else {
                outcome = step(false)
                isDeferred = true
            }
        } catch {
            // The store's exclusive access itself failed (its lock file cannot be opened): the
            // removal is tried without it.
            outcome = step(true)
        }
        guard let outcome else { return nil }
        // A refresh waiting for another process's lease ended with this generation.
        wakeLeaseWaiters(afterNotice: false)
        perform(outcome.effects)
        drainOutbox()
        if isDeferred {
            removePendingSessionWhenAvailable(revoking: revokes ? outcome.ended?.refreshToken : nil)
        }
        if revokes, let ended = outcome.ended {
            if let refreshToken = ended.refreshToken {
                revokeInBackground(refreshToken, kind: .refreshToken, origin: ended.origin)
            } else {
                revokeInBackground(ended.accessToken, kind: .accessToken, origin: ended.origin)
            }
            // The store held a rotation this process had not adopted yet: its tokens go too.
            if let removed = outcome.removed, let token = removed.refreshToken, token != ended.refreshToken {
                revokeInBackground(token, kind: .refreshToken, origin: removed.origin)
            }
        }
        return outcome.removeError
    }

    /// What a sign-out did.
    struct SignOutOutcome {
        let ended: ManagedSession?
        /// The stored session it removed, if any.
        let removed: ManagedSession?
        let effects: [ManagerEffect]
        let removeError: SessionStoreError?
    }

    /// The sign-out's steps under the write lock (and, when `removesNow`, inside the store's
    /// exclusive access): the machine's sign-out, the store's removal (or its record, for later),
    /// the events.
    func signOutLocked(
        error: (any Error)?,
        cause: SignOutCause,
        reason: ManagedSessionError?,
        ifGeneration: UInt64?,
        removing: StoredSessionRemoval,
        removesNow: Bool
    ) -> SignOutOutcome? {
        let plan = state.withLock {
            state -> (ended: ManagedSession?, unsavedOver: String?, owed: PendingRemoval?, effects: [ManagerEffect])? in
            if let ifGeneration, ifGeneration != state.machine.generation { return nil }
            let unsavedOver = state.machine.isSessionUnsaved ? state.machine.unsavedOver : nil
            // With no session here, what this sign-out still owes the store: before the launch
            // read it, whatever is stored; after, only a removal an earlier sign-out could not
            // make yet.
            let owed = state.machine.phase == .ready ? state.pendingRemoval : .anySession
            let plan = state.machine.signOut(error: reason)
            return (plan.ended, unsavedOver, owed, plan.effects)
        }
        guard let plan else { return nil }
        let pending: PendingRemoval?
        switch removing {
        case .thisUser:
            // The stored session goes if it descends from this sign-in (its lineage: the tokens
            // another process rotated it to included), or holds its tokens; a session another
            // process signed in since stays. A sign-out with no session here removes nothing once
            // the store was read (signed out already: what is stored now is a sign-in made since,
            // someone else's); before the launch read it (not started, or waiting for a locked
            // store) it removes whatever is stored, the session this process would have restored.
            pending = plan.ended.map { PendingRemoval.sessionOf($0, alsoHolding: plan.unsavedOver) } ?? plan.owed
        case .endedSession:
            // The tokens it ended, or the ones the store still holds while a write of their
            // rotation is pending.
            let tokens = [plan.ended?.accessToken, plan.ended?.refreshToken, plan.unsavedOver]
            pending = .tokens(Set(tokens.compactMap { $0 }))
        case .refreshTokens(let tokens):
            pending = .tokens(tokens)
        case .nothing:
            pending = nil
        }
        var removeError: SessionStoreError?
        var removed: ManagedSession?
        if removesNow {
            do throws(SessionStoreError) {
                if let pending, let stored = try loadOurs(), pending.matches(stored) {
                    try store.remove()
                    removed = stored
                }
                state.withLock { $0.pendingRemoval = nil }
            } catch .corrupt {
                // Bytes that are no session: no token of this session is readable there. The
                // store keeps them (set aside, or for a later set-aside), and never hands them
                // out as a session.
                state.withLock { $0.pendingRemoval = nil }
            } catch {
                removeError = error
                state.withLock { $0.pendingRemoval = pending }
            }
        } else {
            state.withLock { $0.pendingRemoval = pending }
        }
        state.withLock { state in
            let signOut = QueuedSignOut(cause: cause, endedSession: plan.ended != nil)
            state.signOuts.queue(signOut, behind: state.machine.outbox.filter(SignOutLedger.isSignOut).count)
            state.machine.outbox.append(.sessionSignedOut(error: error))
            if let removeError {
                let reported = AuthSessionError.signingOutFailure(error: ManagedSessionError.storage(removeError))
                state.machine.outbox.append(.unexpectedError(reported))
            }
        }
        return SignOutOutcome(ended: plan.ended, removed: removed, effects: plan.effects, removeError: removeError)
    }

    /// Removes the pending stored session on a thread of its own, waiting for the store's
    /// exclusive access (another process holds it now); revokes the removed session's refresh
    /// token if it is not `revoking`'s own session's (a rotation this process had not adopted).
    /// One such worker at a time.
    func removePendingSessionWhenAvailable(revoking ended: String?) {
        let starts = state.withLock { state -> Bool in
            defer { state.isRemovalWorkerRunning = true }
            return !state.isRemovalWorkerRunning
        }
        guard starts else { return }
        beginOperation()
        let thread = Thread { [self] in
            withBackgroundTask("AuthSessionKit.signOut") { _ in
                var removed: ManagedSession?
                do {
                    removed = try store.withExclusiveAccess {
                        writeLock.withLock { _ in removePendingSessionLocked(reportsFailure: ended != nil) }
                    }
                } catch {
                    let reported = AuthSessionError.signingOutFailure(
                        error: ManagedSessionError.storage(
                            Self.storeError(error)
                        )
                    )
                    state.withLock { $0.machine.outbox.append(.unexpectedError(reported)) }
                }
                state.withLock { $0.isRemovalWorkerRunning = false }
                drainOutbox()
                if let ended, let token = removed?.refreshToken, token != ended {
                    revokeInBackground(token, kind: .refreshToken, origin: removed?.origin)
                }
            }
            endOperation()
        }
        thread.name = "AuthSessionKit.signOut"
        thread.start()
    }

    /// What a store's exclusive access threw, as the store's error.
    static func storeError(_ error: any Error) -> SessionStoreError {
        (error as? SessionStoreError) ?? .unavailable(reason: "exclusive access failed")
    }

    /// The system's time ran out: the leases of refreshes that have not sent their token yet are
    /// given back (nothing will be sent under them), each in an exclusive access of the store
    /// taken only if it is free at once (never a wait: the process is about to be suspended).
    /// A lease whose token may have left stays until it lapses: giving it back could let another
    /// process present the same, possibly spent, refresh token.
    func giveBackUnsentLeases() {
        let abandoned = state.withLock { state -> [RefreshLease] in
            state.unsentLeases.values.compactMap { $0.abandon() ? $0.lease : nil }
        }
        for lease in abandoned {
            _ = try? store.withExclusiveAccessIfAvailable {
                if (try? store.loadLease()) == lease { try? store.saveLease(nil) }
            }
        }
    }

    /// Makes `time` the background refresh's: work begun from now on stops taking the store's
    /// access once it expires.
    func beginBackgroundRefresh(_ time: BackgroundTime) {
        state.withLock { $0.backgroundRefreshTime = time }
    }

    /// Ends `time`'s hold on work begun from now on, if it is still the background refresh's.
    func endBackgroundRefresh(_ time: BackgroundTime) {
        state.withLock { state in
            if state.backgroundRefreshTime === time { state.backgroundRefreshTime = nil }
        }
    }

    /// When the session's token is due for a refresh (its expiry less the margin), if there is
    /// a session and a refresh token.
    var nextRefreshDate: Date? {
        state.withLock { state in
            guard let session = state.machine.session, session.refreshToken != nil else { return nil }
            let date = session.expiresAt - configuration.margin(for: session)
            return date.isFinite ? Date(timeIntervalSince1970: date) : nil
        }
    }

    /// Runs `body` inside the configured background-task assertion, if any, with what tells it the
    /// system's time ran out.
    func withBackgroundTask<Result>(_ name: String, _ body: (BackgroundTime) -> Result) -> Result {
        let time = BackgroundTime(within: state.withLock { $0.backgroundRefreshTime })
        let token = configuration.backgroundTask?.begin(name) { [weak self] in
            time.expire()
            self?.giveBackUnsentLeases()
        }
        defer { token?.end() }
        return body(time)
    }
}
