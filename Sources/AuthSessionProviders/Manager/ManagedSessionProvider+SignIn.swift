import AuthSession
import AuthSessionInterface
import Foundation

extension ManagedSessionProvider {

    /// Signs in: exchanges `grant` for tokens, stores the session, and only then makes it the
    /// runtime session and publishes `sessionSignIn`.
    ///
    /// The exchange runs through the ``retryPolicy``: a transient failure is retried, never an
    /// answer that may have been lost. A device code's `authorization_pending` or `slow_down` is
    /// not retried either (the device flow polls at the server's interval, not at a backoff): use
    /// the device-flow sign-in of AuthSessionOAuth2, which polls.
    ///
    /// Profile fields a backend sends only on the first sign-in (a name, an email) are merged from
    /// the last known user with the same subject. If the store cannot keep the session, the
    /// sign-in fails and the tokens just issued are revoked. If a sign-out or another sign-in
    /// committed meanwhile, this one fails with ``ManagedSessionError/superseded``.
    ///
    /// A failed sign-in changes nothing: whatever session there was stands, even when the error's
    /// ``ManagedSessionError/endsSession`` is `true` (a wrong password's `invalid_grant` is terminal
    /// for the grant, not for the session already here).
    ///
    /// - Parameter grant: What the user presents.
    /// - Returns: The new session.
    /// - Throws: ``ManagedSessionError``; ``ManagedSessionError/cancelled`` if the calling task
    ///   was cancelled.
    @discardableResult
    public func signIn(with grant: AuthGrant) async throws(ManagedSessionError) -> ManagedSession {
        try await signIn(
            grantType: grant.grantType,
            obtainingTokens: { () throws(RemoteAuthError) -> IssuedTokens in
                try await retryPolicy.run(clock: clock, isIdempotent: false) { _ throws(RemoteAuthError) in
                    try await remote.obtainTokens(with: grant)
                }
            }
        )
    }
}

// Sign-in by any flow: the tokens are stored, then committed as the runtime session.
extension ManagedSessionProvider {

    // MARK: - The manager's own surface

    /// Signs in with tokens that `obtainTokens` gets by any flow (a device flow's polling, a
    /// browser sign-in), then commits them as ``signIn(with:)`` does: the session is
    /// stored, and only then made the runtime session and published.
    ///
    /// `obtainTokens` runs once, as it is: the ``retryPolicy`` does not retry it. A sign-out or
    /// another sign-in that commits while it runs supersedes this one.
    ///
    /// - Parameters:
    ///   - grantType: The grant the flow ends in (`"authorization_code"`,
    ///     `"urn:ietf:params:oauth:grant-type:device_code"`): what the ``ManagedSessionObserver``
    ///     reports, and what makes an `invalid_grant` read as a person expects ("Wrong username or
    ///     password" for `"password"`).
    ///   - obtainTokens: Gets the tokens.
    /// - Returns: The new session.
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/remote(_:)`` with the error
    ///   `obtainTokens` threw, ``ManagedSessionError/cancelled`` for a `cancelled` one, or what
    ///   ``signIn(with:)`` throws when committing.
    @discardableResult
    public func signIn(
        grantType: String,
        obtainingTokens obtainTokens: () async throws(RemoteAuthError) -> IssuedTokens
    ) async throws(ManagedSessionError) -> ManagedSession {
        try await observingSignIn(grantType: grantType) { () async throws(ManagedSessionError) in
            try await signInUnobserved(grantType: grantType, obtainingTokens: obtainTokens)
        }
    }

    /// ``signIn(grantType:obtainingTokens:)`` without the observer's calls around it.
    func signInUnobserved(
        grantType: String,
        obtainingTokens obtainTokens: () async throws(RemoteAuthError) -> IssuedTokens
    ) async throws(ManagedSessionError) -> ManagedSession {
        let startGeneration = state.withLock { $0.machine.generation }
        // A store that refused itself at launch (a file open to other users, another user's, a
        // link) would refuse the new session too: say so now, before the server issues tokens
        // for nothing; once it reads again, sign-ins go on as usual.
        if state.withLock({ $0.storeRefusedItself }) {
            let refusal = await onOwnThread { [store] () -> SessionStoreError? in
                do throws(SessionStoreError) {
                    _ = try store.load()
                    return nil
                } catch {
                    return Self.isRefusal(error) ? error : nil
                }
            }
            if let refusal { throw .storage(refusal) }
            state.withLock { $0.storeRefusedItself = false }
        }
        let tokens: IssuedTokens
        do throws(RemoteAuthError) {
            tokens = try await obtainTokens()
            instrumentation.issued(tokens)
        } catch {
            throw error.reason == .cancelled ? .cancelled : .remote(error.presenting(grantType: grantType))
        }
        let now = clock.now
        let subject = tokens.user?.identifier ?? ""
        let known = state.withLock { $0.machine.userToMerge(subject: subject) }
        let issued = makeSession(from: tokens, now: now, previous: nil, knownUser: known)
        // Inside the store's exclusive access, so that no other process's compare-and-save can
        // write over the new session; on a thread of its own, since that access may be held by a
        // process suspended inside it.
        let commit = { @Sendable () -> (SignInCommit, ManagedSession?) in
            self.writeLock.withLock { _ in
                self.commitSignIn(issued, subject: subject, startGeneration: startGeneration, now: now)
            }
        }
        let failed = { @Sendable (error: any Error) -> (SignInCommit, ManagedSession?) in
            let storeError = Self.storeError(error)
            return (.failure(.storage(storeError)), nil)
        }
        var outcome: (SignInCommit, ManagedSession?)?
        do {
            // Usually free: taken at once, on this thread.
            outcome = try store.withExclusiveAccessIfAvailable(commit)
        } catch {
            outcome = failed(error)
        }
        let (committed, replaced) =
            if let outcome {
                outcome
            } else {
                await onOwnThread { () -> (SignInCommit, ManagedSession?) in
                    do {
                        return try self.store.withExclusiveAccess(commit)
                    } catch {
                        return failed(error)
                    }
                }
            }
        switch committed {
        case .success(let (effects, signedIn)):
            wakeLeaseWaiters(afterNotice: false)
            perform(effects)
            drainOutbox()
            if let replaced {
                // The session this sign-in replaced is abandoned: its tokens are revoked.
                revokeInBackground(
                    replaced.refreshToken ?? replaced.accessToken,
                    kind: replaced.refreshToken == nil ? .accessToken : .refreshToken,
                    origin: replaced.origin
                )
            }
            return signedIn
        case .failure(let error):
            revokeInBackground(
                tokens.refreshToken ?? tokens.accessToken,
                kind: tokens.refreshToken == nil ? .accessToken : .refreshToken
            )
            throw error
        }
    }

    /// A sign-in's commit, inside the store's exclusive access and the write lock: stores the
    /// session and makes it the runtime one, unless a sign-out or another sign-in committed since
    /// the sign-in started. Returns the effects and the session it replaced.
    func commitSignIn(
        _ session: ManagedSession,
        subject: String,
        startGeneration: UInt64,
        now: Date
    ) -> (SignInCommit, ManagedSession?) {
        var signedIn = session
        let (generation, current) = state.withLock { ($0.machine.generation, $0.machine.session) }
        guard generation == startGeneration else { return (.failure(.superseded), nil) }
        // The same person signing in again keeps the biometric setting; without a subject,
        // nothing says it is the same person.
        if let current, !subject.isEmpty, current.user.identifier == subject {
            signedIn.isBiometricAuthenticationEnabled = current.isBiometricAuthenticationEnabled
        }
        do throws(SessionStoreError) {
            try store.save(signedIn)
        } catch {
            return (.failure(.storage(error)), nil)
        }
        // Every generation change happens under the write lock: this commit cannot be refused.
        let effects = state.withLock { $0.machine.signedIn(signedIn, startGeneration: startGeneration, now: now) }
        return (.success((effects ?? [], signedIn)), current)
    }

    /// A sign-in's commit: its effects and the session stored, or why it failed.
    typealias SignInCommit = Result<([ManagerEffect], ManagedSession), ManagedSessionError>

    /// Runs `body` on a thread of its own and returns its result: for work that may block on a
    /// lock another process holds, without holding one of the few threads Swift's tasks run on.
    func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "AuthSessionKit.store"
            thread.start()
        }
    }
}
