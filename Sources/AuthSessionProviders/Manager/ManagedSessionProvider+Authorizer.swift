import Foundation

extension ManagedSessionProvider {

    /// The session, its access token valid `minimumValidity` more seconds (refreshed first if it
    /// is not, as ``validAccessToken(minimumValidity:)`` does).
    ///
    /// Sign requests with this when you may retry them: the token and the person it belongs to
    /// come from one step of the manager, so that after a rejection you can tell whether the
    /// session ``refresh(ifAccessTokenIs:minimumValidity:)`` returns is still that person's
    /// (``ManagedSession/isSameIdentity(as:)``), even if someone signed out and another person
    /// signed in meanwhile.
    ///
    /// - Parameter minimumValidity: The seconds the token must still be valid; 30 by default.
    /// - Returns: The session whose ``ManagedSession/accessToken`` to send.
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/notSignedIn``, the refresh's
    ///   failure (the session stands unless ``ManagedSessionError/endsSession``), or
    ///   ``ManagedSessionError/cancelled``.
    public func validSession(minimumValidity: TimeInterval = 30) async throws(ManagedSessionError) -> ManagedSession {
        // The common case as `validAccessToken` takes it: one lock and one clock read.
        if let session = validSessionIfFresh(minimumValidity: max(0, minimumValidity)) {
            return session
        }
        return try await waitForSession(minimumValidity: max(0, minimumValidity))
    }

    /// Refreshes if the session's access token is still `rejectedAccessToken`, joining a refresh
    /// already in flight; otherwise returns the session as it is (refreshed first only if its
    /// access token is not valid `minimumValidity` more seconds, as
    /// ``validAccessToken(minimumValidity:)`` does).
    ///
    /// Call it when a resource server rejected an access token (HTTP 401). The comparison and the
    /// start (or join) of the refresh are one step of the manager: a rejection that arrives after
    /// the refresh committed finds the new token and refreshes nothing. ``refresh()`` cannot
    /// promise that: a caller that read the old token just before a refresh committed would start
    /// a second one. `AuthorizedHTTPClient` (in AuthSessionOAuth2) is built on this.
    ///
    /// However many requests were rejected with the same token, and whenever their answers
    /// arrive, at most one refresh of that token reaches the server while its retry backoff runs:
    /// - while a refresh is in flight, every rejection joins it;
    /// - after it succeeded, a rejection finds the new token and refreshes nothing;
    /// - after it failed transiently (the network, a 5xx, a 429, the store), a rejection of the
    ///   same token fails at once with that failure until the manager's automatic retry is due
    ///   (30 seconds after the first failure, doubling up to 5 minutes): an outage is not
    ///   hammered by waves of 401s. Once the backoff has run out, a rejection refreshes again;
    /// - after a misconfiguration, a rejection fails with it; ``refresh()`` retries it.
    ///
    /// ``refresh()`` and ``validAccessToken(minimumValidity:)`` are not held back by a failed
    /// refresh.
    ///
    /// The session returned may be another person's: if someone signed out and another person
    /// signed in since the rejected request was signed, that person's session is returned as it
    /// is. Never send the rejected request again with its token; compare it with the session you
    /// signed with (``validSession(minimumValidity:)``, ``ManagedSession/isSameIdentity(as:)``).
    ///
    /// - Parameters:
    ///   - rejectedAccessToken: The access token the server rejected.
    ///   - minimumValidity: The seconds a token other than `rejectedAccessToken` must still be
    ///     valid; 30 by default.
    /// - Returns: The session to retry with: refreshed, or the current one if its access token is
    ///   no longer `rejectedAccessToken`.
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/notSignedIn``, the refresh's
    ///   failure or the failure of the last one during its backoff (the session stands unless
    ///   ``ManagedSessionError/endsSession``), ``ManagedSessionError/refreshUnavailable`` if the
    ///   session has no refresh token and its access token is the rejected one (the session is
    ///   left as it is), or ``ManagedSessionError/cancelled`` (the refresh goes on for other
    ///   callers).
    public func refresh(
        ifAccessTokenIs rejectedAccessToken: String,
        minimumValidity: TimeInterval = 30
    ) async throws(ManagedSessionError) -> ManagedSession {
        try await waitForSession(minimumValidity: max(0, minimumValidity), rejectedAccessToken: rejectedAccessToken)
    }
}
