import AuthSession
import AuthSessionInterface
import Foundation

// The refresh: claim the store's lease, present the refresh token once, commit the answer.
extension ManagedSessionProvider {

    // MARK: - Refresh

    enum RefreshOutcome {
        case committed([ManagerEffect], orphaned: String?)
        case failed(ManagedSessionError)
        /// The session is over. `removesStore` is false when the store holds someone else's
        /// session (another process signed out or in); `orphaned` is a refresh token obtained
        /// for nothing, to revoke.
        case terminal(ManagedSessionError, removesStore: Bool, orphaned: String?)
        /// A sign-out or sign-in happened meanwhile; tokens obtained for nothing are revoked.
        case stale(orphaned: String?)
    }

    /// Starts `flight` on a thread of its own (``RefreshThread``: the refresh blocks on the
    /// store's lock, never on a cooperative thread).
    func startRefresh(_ flight: RefreshFlight) {
        beginOperation()
        RefreshThread.start(named: "AuthSessionKit.refresh") { [self] in
            withBackgroundTask("AuthSessionKit.refresh") { time in
                let start = clock.now
                instrumentation.delivery.send(.refreshStarted(isLaunch: flight.isLaunch))
                let outcome = runRefresh(flight, time: time)
                reportRefresh(flight, outcome, since: start)
                finish(flight, outcome)
            }
            endOperation()
        }
    }

    func isCurrent(_ flight: RefreshFlight) -> Bool {
        state.withLock { $0.machine.isCurrent(flight) }
    }

    /// The refresh: claim (a short exclusive access: adopt, sign out, wait for another process's
    /// lease, or record this one's), present the refresh token with nothing held, then commit (a
    /// short exclusive access: compare, save, clear the lease). The machine decides each step.
    ///
    /// Once the system's background time has run out (`time`), it takes the store's exclusive
    /// access no more: a process suspended while it holds a file lock in a shared container is
    /// killed. A refresh not yet presented fails as the store being unavailable (the next
    /// activation refreshes); rotated tokens that arrive after it are kept unsaved, written at the
    /// next activation; its lease is left to lapse.
    func runRefresh(_ flight: RefreshFlight, time: BackgroundTime) -> RefreshOutcome {
        let owner = leaseOwner
        while true {
            var claimedAtUptime: TimeInterval = 0
            if time.hasExpired {
                return .failed(.storage(BackgroundTime.expiredError))
            }
            guard let noticesSeen = state.withLock({ $0.machine.isCurrent(flight) ? $0.noticeCount : nil }) else {
                return .stale(orphaned: nil)
            }
            let claim: RefreshClaim
            do {
                claim = try store.withExclusiveAccess { () throws -> RefreshClaim in
                    var found = try snapshot()
                    var claim = state.withLock {
                        $0.machine.claim(flight, found: found, owner: owner, now: clock.now, uptime: clock.uptime)
                    }
                    if claim == .writeBack {
                        guard try writeBack(flight) else { return .stale }
                        found.stored = .session(flight.session)
                        claim = state.withLock {
                            $0.machine.claim(flight, found: found, owner: owner, now: clock.now, uptime: clock.uptime)
                        }
                    }
                    if case .present(let lease) = claim {
                        claimedAtUptime = clock.uptime
                        try store.saveLease(lease)
                        // From here until the token leaves, an expiry may give the lease back.
                        state.withLock { $0.unsentLeases[flight.id] = UnsentLease(lease) }
                    }
                    return claim
                }
            } catch {
                return .failed(
                    .storage(Self.storeError(error))
                )
            }
            switch claim {
            case .stale, .writeBack:
                return .stale(orphaned: nil)
            case .adopt(let stored):
                return commitAdopted(flight, stored)
            case .signedOutElsewhere:
                return .terminal(.signedOutElsewhere, removesStore: false, orphaned: nil)
            case .wait(let deadline):
                instrumentation.counters(for: flight.id).waitedForLease()
                waitForLease(of: flight, until: deadline, noticesSeen: noticesSeen)
            case .present(let lease):
                let window = configuration.sendingWindow(of: lease, claimedAtUptime: claimedAtUptime, clock: clock)
                return present(flight, lease: lease, window: window, time: time)
            }
        }
    }

    /// Writes the flight's session back over unreadable bytes the claim found (inside the
    /// store's exclusive access): this process still has the session, so the gap is no sign-out.
    /// Under the write lock, and only if no sign-out or sign-in committed since: a signed-out
    /// session is never written back.
    ///
    /// - Returns: `false` if the flight is no longer current (nothing written).
    func writeBack(_ flight: RefreshFlight) throws(SessionStoreError) -> Bool {
        try writeLock.withLock { _ -> Result<Bool, SessionStoreError> in
            guard isCurrent(flight) else { return .success(false) }
            do throws(SessionStoreError) {
                try store.save(flight.session)
            } catch {
                return .failure(error)
            }
            return .success(true)
        }.get()
    }

    /// What the store holds, and its lease, for a refresh's claim (inside exclusive access).
    func snapshot() throws(SessionStoreError) -> StoreSnapshot {
        let stored = try loadForCompare()
        let lease = try store.loadLease()
        return StoreSnapshot(stored: stored, lease: lease, isLeaseOwnerRunning: lease?.owner.mayBeRunning ?? false)
    }

    /// Waits, with nothing held, until the store changes (a notice), `deadline` comes, or the
    /// flight ends (a sign-out). Without notices, it looks again every 250 ms; with them, every
    /// 2 s at the latest, in case one was missed.
    func waitForLease(of flight: RefreshFlight, until deadline: Date, noticesSeen: UInt64) {
        let wake = DispatchSemaphore(value: 0)
        let registered = state.withLock { state -> UInt64? in
            // A notice since the claim read the store: claim again at once.
            guard state.noticeCount == noticesSeen, state.machine.isCurrent(flight) else { return nil }
            state.lastLeaseWaiterID += 1
            state.leaseWaiters[state.lastLeaseWaiterID] = wake
            return state.lastLeaseWaiterID
        }
        guard let registered else { return }
        let look = min(deadline, clock.now.addingTimeInterval(store.changeNotifier == nil ? 0.25 : 2))
        RefreshThread.sleep(until: look, clock: clock, orUntilSignalled: wake)
        state.withLock { _ = $0.leaseWaiters.removeValue(forKey: registered) }
    }

    /// Wakes the refreshes waiting for another process's lease: the store changed, or a sign-out
    /// or sign-in ended their flight.
    func wakeLeaseWaiters(afterNotice: Bool) {
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            if afterNotice { state.noticeCount &+= 1 }
            return Array(state.leaseWaiters.values)
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Presents the refresh token under `lease`, with nothing held, then commits.
    func present(
        _ flight: RefreshFlight,
        lease: RefreshLease,
        window: RefreshSendingWindow,
        time: BackgroundTime
    ) -> RefreshOutcome {
        // An expiry that came since the claim gave the lease back: nothing is sent under it.
        let unsent = state.withLock { $0.unsentLeases.removeValue(forKey: flight.id) } ?? UnsentLease(lease)
        guard let refreshToken = flight.session.refreshToken else {
            if unsent.startPresenting() { clearLease(lease) }
            return .failed(.refreshUnavailable)
        }
        let counters = instrumentation.counters(for: flight.id)
        let mayPresent = unsent.startPresenting() && !time.hasExpired
        guard mayPresent else {
            return .failed(.storage(BackgroundTime.expiredError))
        }
        let answer = presentOnce(
            refreshToken,
            cutoff: configuration.exchangeCutoff(of: lease),
            window: window,
            counters: counters
        )
        if time.hasExpired {
            // No store access any more: the lease lapses by itself, rotated tokens stay unsaved.
            switch answer {
            case .success(let tokens):
                let refreshed = makeSession(
                    from: tokens,
                    now: clock.now,
                    previous: flight.session,
                    knownUser: flight.session.user
                )
                return writeLock.withLock { _ in
                    commitUnsaved(flight, refreshed, writeError: BackgroundTime.expiredError)
                }
            case .failure(let error):
                return .failed(.remote(error))
            }
        }
        switch answer {
        case .failure(let error):
            guard error.kind == .terminal else {
                clearLease(lease)
                return .failed(.remote(error))
            }
            let stored = clearLease(lease, reading: true)
            if let adopted = state.withLock({ $0.machine.sessionToAdopt(afterTerminal: flight, stored: stored) }) {
                return commitAdopted(flight, adopted)
            }
            let cause = flight.verdict.map(ManagedSessionError.credentialRevoked) ?? .remote(error)
            return .terminal(cause, removesStore: true, orphaned: nil)
        case .success(let tokens):
            let expected = flight.session.user.identifier
            // A subject the client could not verify serves here only, to refuse; it is never stored.
            if let subject = tokens.user?.identifier ?? tokens.unverifiedSubject, !expected.isEmpty,
                subject != expected
            {
                // OpenID Connect: a refresh's ID token names the session's user. Another user's
                // tokens are revoked, never used; this session's refresh token is spent, so the
                // session ends.
                clearLease(lease)
                let mismatch = IDTokenValidationError.subjectMismatch(expected: expected, actual: subject)
                return .terminal(
                    .remote(RemoteAuthError(.invalidIDToken(mismatch))),
                    removesStore: true,
                    orphaned: tokens.refreshToken ?? tokens.accessToken
                )
            }
            let refreshed = makeSession(
                from: tokens,
                now: clock.now,
                previous: flight.session,
                knownUser: flight.session.user
            )
            return commitRefreshed(flight, refreshed, lease: lease)
        }
    }

    /// Removes `lease` from the store if it is still the one recorded (another process may have
    /// taken it over after its deadline); with `reading`, also returns the stored session.
    @discardableResult
    func clearLease(_ lease: RefreshLease, reading: Bool = false) -> ManagedSession? {
        try? store.withExclusiveAccess { () -> ManagedSession? in
            if (try? store.loadLease()) == lease {
                try? store.saveLease(nil)
            }
            return reading ? (try? loadOurs()) ?? nil : nil
        } ?? nil
    }

    /// Presents `refreshToken`, retrying only failures the server did not act on, and blocks the
    /// calling thread (the refresh's own) until the answer, or until `cutoff`: a little before the
    /// lease lapses the exchange is abandoned, as a timeout whose outcome is unknown. No attempt
    /// starts, and (through the package's transport) no request leaves, once `window` closed: a
    /// process stopped inside its exchange past its lease and then resumed does not send a
    /// refresh token another process may have presented since.
    func presentOnce(
        _ refreshToken: String,
        cutoff: Date,
        window: RefreshSendingWindow,
        counters: RefreshCounters
    ) -> Result<IssuedTokens, RemoteAuthError> {
        let remote = remote
        let policy = retryPolicy
        let clock = clock
        let scope = configuration.refreshScope
        let instrumentation = instrumentation
        return RefreshThread.awaitAnswer(
            of: {
                await RefreshSendingWindow.$current.withValue(window) {
                    () async -> Result<IssuedTokens, RemoteAuthError> in
                    do throws(RemoteAuthError) {
                        let tokens = try await policy.run(clock: clock, isIdempotent: false) {
                            _ throws(RemoteAuthError) in
                            guard window.isOpen else { throw RemoteAuthError(.timedOut) }
                            counters.attempted()
                            return try await remote.refresh(refreshToken, scope: scope)
                        }
                        instrumentation.issued(tokens)
                        return .success(tokens)
                    } catch {
                        return .failure(error.presenting(grantType: "refresh_token"))
                    }
                }
            },
            until: cutoff,
            clock: clock,
            timedOut: .failure(RemoteAuthError(.timedOut))
        )
    }

    /// Commits `stored`, the rotation (or same-person sign-in) another process made, if the flight
    /// is still current. The runtime session's biometric setting is kept.
    func commitAdopted(_ flight: RefreshFlight, _ stored: ManagedSession) -> RefreshOutcome {
        writeLock.withLock { _ in
            guard let current = state.withLock({ $0.machine.isCurrent(flight) ? $0.machine.session : nil }) else {
                return .stale(orphaned: nil)
            }
            var adopted = stored
            adopted.isBiometricAuthenticationEnabled = current.isBiometricAuthenticationEnabled
            let now = clock.now
            let effects = state.withLock {
                $0.machine.refreshed(flight, to: adopted, isUnsaved: false, writeError: nil, now: now)
            }
            return .committed(effects, orphaned: nil)
        }
    }

    /// Inside a short exclusive access: compares the store with what the refresh started from,
    /// saves `refreshed` (or adopts what another process stored), clears the lease, and commits.
    /// If the store cannot be read or written, the rotated session is committed unsaved (its
    /// refresh token is spent: the new one must not be lost) and its write retried.
    func commitRefreshed(
        _ flight: RefreshFlight,
        _ refreshed: ManagedSession,
        lease: RefreshLease
    ) -> RefreshOutcome {
        let outcome: RefreshOutcome?
        do {
            outcome = try store.withExclusiveAccess { () -> RefreshOutcome in
                defer {
                    if (try? store.loadLease()) == lease { try? store.saveLease(nil) }
                }
                return writeLock.withLock { _ in
                    let found: StoreSnapshot.Stored
                    do throws(SessionStoreError) {
                        found = try loadForCompare()
                    } catch {
                        return commitUnsaved(flight, refreshed, writeError: error)
                    }
                    switch state.withLock({ $0.machine.commitPlan(flight, refreshed: refreshed, found: found) }) {
                    case .stale(let orphaned):
                        return .stale(orphaned: orphaned)
                    case .signedOutElsewhere(let orphaned):
                        return .terminal(.signedOutElsewhere, removesStore: false, orphaned: orphaned)
                    case .adopt(let stored, let orphaned):
                        let now = clock.now
                        let effects = state.withLock {
                            $0.machine.refreshed(flight, to: stored, isUnsaved: false, writeError: nil, now: now)
                        }
                        return .committed(effects, orphaned: orphaned)
                    case .save(let session):
                        do throws(SessionStoreError) {
                            try store.save(session)
                        } catch {
                            return commitUnsaved(flight, session, writeError: error)
                        }
                        let now = clock.now
                        let effects = state.withLock {
                            $0.machine.refreshed(flight, to: session, isUnsaved: false, writeError: nil, now: now)
                        }
                        return .committed(effects, orphaned: nil)
                    }
                }
            }
        } catch {
            outcome = nil
        }
        if let outcome { return outcome }
        // Exclusive access itself failed: keep the rotated tokens, unsaved.
        return writeLock.withLock { _ in
            commitUnsaved(flight, refreshed, writeError: .unavailable(reason: "exclusive access failed"))
        }
    }

    /// Commits a rotated session the store could not take (called under the write lock).
    func commitUnsaved(
        _ flight: RefreshFlight,
        _ refreshed: ManagedSession,
        writeError: SessionStoreError
    ) -> RefreshOutcome {
        guard let current = state.withLock({ $0.machine.isCurrent(flight) ? $0.machine.session : nil }) else {
            return .stale(orphaned: refreshed.refreshToken)
        }
        var refreshed = refreshed
        refreshed.isBiometricAuthenticationEnabled = current.isBiometricAuthenticationEnabled
        let now = clock.now
        let effects = state.withLock {
            $0.machine.refreshed(flight, to: refreshed, isUnsaved: true, writeError: writeError, now: now)
        }
        return .committed(effects, orphaned: nil)
    }

    func finish(_ flight: RefreshFlight, _ outcome: RefreshOutcome) {
        switch outcome {
        case .committed(let effects, let orphaned):
            perform(effects)
            drainOutbox()
            if let orphaned {
                revokeInBackground(orphaned, kind: .refreshToken)
            }
        case .failed(let error):
            input { machine, now in machine.refreshFailed(flight, error: error, now: now) }
        case .terminal(let error, let removesStore, let orphaned):
            // Only the session this refresh was about is removed: if the store holds another
            // (another process rotated it, or signed in), that one stays.
            // Either token of this session: the one the flight presented, or the older one the
            // store held while a write was pending (a retried write may have landed since).
            let ours = Set([flight.session.refreshToken, flight.storedRefreshToken].compactMap { $0 })
            _ = performSignOut(
                error: error,
                reason: error,
                ifGeneration: flight.generation,
                revokes: false,
                removing: removesStore ? .refreshTokens(ours) : .nothing
            )
            if let orphaned {
                revokeInBackground(orphaned, kind: .refreshToken)
            }
        case .stale(let orphaned):
            if let orphaned {
                revokeInBackground(orphaned, kind: .refreshToken)
            }
        }
    }

    /// Writes the rotated session whose write failed, if the store still holds the tokens it
    /// replaced; adopts what another process wrote meanwhile (same user), or signs out (someone
    /// else's session, or none). On a thread of its own: it takes the store's exclusive access.
    func rewrite(generation: UInt64) {
        beginOperation()
        RefreshThread.start(named: "AuthSessionKit.rewrite") { [self] in
            var effects: [ManagerEffect] = []
            withBackgroundTask("AuthSessionKit.rewrite") { time in
                guard !time.hasExpired else {
                    // No time to take the store's access: the next activation writes it.
                    effects = state.withLock {
                        $0.machine.rewritten(generation: generation, error: BackgroundTime.expiredError)
                    }
                    return
                }
                do {
                    effects = try store.withExclusiveAccess { () -> [ManagerEffect] in
                        writeLock.withLock { _ in compareAndRewrite(generation: generation) }
                    }
                } catch {
                    let storeError = Self.storeError(error)
                    effects = state.withLock { $0.machine.rewritten(generation: generation, error: storeError) }
                }
            }
            perform(effects)
            drainOutbox()
            endOperation()
        }
    }
}
