import AuthSession
import AuthSessionInterface
import Foundation

// The calls an app makes for a token, a refresh, a pushed revocation, an account deletion.
extension ManagedSessionProvider {

    /// An access token valid for at least `minimumValidity` more seconds: what API calls use.
    ///
    /// Cheap when the token is valid (one lock, one clock read). Otherwise the caller joins the
    /// one refresh in flight, or starts it: any number of concurrent callers, in this process or
    /// in others sharing the store, cause one request. Before the launch finished, the caller
    /// waits for it. Cancelling the caller ends its wait only; the refresh goes on for the others.
    ///
    /// `minimumValidity` is capped at half the token's lifetime as the server granted it: a
    /// caller cannot ask for more validity than the server ever gives, so asking for an hour of a
    /// server that issues one-hour tokens does not refresh on every call. A refreshed token is
    /// returned even if it is still short of `minimumValidity`.
    ///
    /// - Parameter minimumValidity: The seconds the token must still be valid; 30 by default.
    /// - Returns: The access token.
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/notSignedIn``, the refresh's
    ///   failure (the session stands unless ``ManagedSessionError/endsSession``), or
    ///   ``ManagedSessionError/cancelled``.
    @inlinable
    public func validAccessToken(minimumValidity: TimeInterval = 30) async throws(ManagedSessionError) -> String {
        // Inlinable, so that the common case (a valid token: one lock, one clock read) costs the
        // caller no call into an async function of its own.
        if let token = validTokenIfFresh(minimumValidity: minimumValidity) {
            return token
        }
        return try await waitForValidToken(minimumValidity: minimumValidity)
    }

    /// The access token if it stays valid `minimumValidity` more seconds and no refresh is
    /// forced: ``validAccessToken(minimumValidity:)``'s common case.
    @usableFromInline
    func validTokenIfFresh(minimumValidity: TimeInterval) -> String? {
        let now = clock.now
        return state.withLock { $0.machine.validToken(minimumValidity: minimumValidity, now: now) }
    }

    /// The session if its access token stays valid `minimumValidity` more seconds: the common
    /// case of ``validSession(minimumValidity:)``, one lock and one clock read.
    func validSessionIfFresh(minimumValidity: TimeInterval) -> ManagedSession? {
        let now = clock.now
        return state.withLock { $0.machine.validSession(minimumValidity: minimumValidity, now: now) }
    }

    /// ``validAccessToken(minimumValidity:)`` when the token is not valid long enough: joins or
    /// starts the refresh, or waits for the launch.
    @usableFromInline
    func waitForValidToken(minimumValidity: TimeInterval) async throws(ManagedSessionError) -> String {
        try await waitForSession(minimumValidity: max(0, minimumValidity)).accessToken
    }

    /// Refreshes now, whether or not a refresh is due, and returns the refreshed session. Joins a
    /// refresh already in flight instead of starting a second one.
    ///
    /// A refresh presents the stored refresh token once. If its answer is lost (a timeout, a
    /// reset after sending), it is not retried: the server may have spent the token. The session
    /// stands and the next refresh presents the token again; a server with a refresh grace period
    /// accepts it, one without may end the session.
    ///
    /// - Returns: The refreshed session.
    /// - Throws: ``ManagedSessionError``.
    @discardableResult
    public func refresh() async throws(ManagedSessionError) -> ManagedSession {
        try await waitForSession(minimumValidity: nil)
    }

    /// Signs out because the backend revoked the credential (a pushed notification, such as Sign
    /// in with Apple's). Does nothing without a session.
    public func handleCredentialRevocation() {
        guard let generation = state.withLock({ $0.machine.session == nil ? nil : $0.machine.generation }) else {
            return
        }
        let reason = ManagedSessionError.credentialRevoked(.revoked)
        _ = performSignOut(error: reason, reason: reason, ifGeneration: generation, revokes: false)
    }

    /// Deletes the user's account: the backend deletes it (``RemoteAuthService/deleteAccount(of:)``,
    /// which for Sign in with Apple also revokes its tokens at Apple), then the manager signs out
    /// with ``ManagedSessionError/accountDeleted`` (``SignOutCause/accountDeleted`` on the session
    /// stream), without revoking anything again.
    ///
    /// The backend goes first: until it confirms, the account exists, so any failure leaves the
    /// user signed in, to try again. The call gets a valid access token first
    /// (``validSession(minimumValidity:)``, which refreshes if need be). Then whatever session of
    /// that account is signed in is signed out, also one a sign-in committed while the backend
    /// worked; another person's session, signed in meanwhile, is left alone. A sign-out that
    /// comes first keeps its own cause: when the backend's revocation makes the provider revoke
    /// the credential before the backend answers (Sign in with Apple's revocation notification,
    /// say), the session ends with ``ManagedSessionError/credentialRevoked(_:)``, and the call
    /// still returns normally once the backend confirms.
    ///
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/notSignedIn``, the refresh's
    ///   failure, ``ManagedSessionError/superseded`` when another person's sign-in committed while
    ///   the token was got (nothing is deleted) or a sign-in of the account committed during its
    ///   sign-out (the account is deleted), ``ManagedSessionError/remote(_:)`` with the
    ///   backend's error (`unsupported` for a backend that deletes no account),
    ///   ``ManagedSessionError/cancelled``, or ``ManagedSessionError/storage(_:)`` when the stored
    ///   session could not be removed (the user is signed out in memory all the same).
    public func deleteAccount() async throws(ManagedSessionError) {
        let session = try await validSession()
        // Another person's sign-in may have committed since the token was got: never delete theirs.
        guard generation(ofAccountOf: session) != nil else {
            throw .superseded
        }
        do throws(RemoteAuthError) {
            try await remote.deleteAccount(of: session)
        } catch {
            throw error.reason == .cancelled ? .cancelled : .remote(error)
        }
        let reason = ManagedSessionError.accountDeleted
        // The account's session now: the one the call began with, or a sign-in of the same account
        // committed while the backend deleted it. Whatever commits between this read and the
        // sign-out is a new generation, and the sign-out leaves it alone; the call then says so.
        if let current = generation(ofAccountOf: session),
            let removeError = performSignOut(error: reason, reason: reason, ifGeneration: current, revokes: false)
        {
            throw .storage(removeError)
        }
        if generation(ofAccountOf: session) != nil {
            throw .superseded
        }
    }

    /// The generation of the session signed in now when it is `session`'s account; `nil` for none
    /// or another person's.
    func generation(ofAccountOf session: ManagedSession) -> UInt64? {
        state.withLock { state in
            guard let current = state.machine.session, current.isSameIdentity(as: session) else { return nil }
            return state.machine.generation
        }
    }

    /// Loads the store again at once if the launch is waiting for it (it was unavailable: a device
    /// not yet unlocked, a Keychain item whose access control the user has not yet passed);
    /// otherwise does nothing.
    ///
    /// The manager retries such a store on its own, on activation and on a timer (see
    /// ``Configuration/storageRetryInterval``); call this when you know it became readable, after
    /// `KeychainSessionStore.authenticate(reason:)` for example. Returns at once; the load runs on
    /// the calling thread.
    public func reloadStore() {
        input { machine, _ in machine.storeMayBeAvailable() }
    }
}
