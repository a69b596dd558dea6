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
