import Foundation

extension ManagedSessionProvider {

    /// Refreshes if the session's access token is still `rejectedAccessToken`, joining a refresh
    /// already in flight; otherwise returns the session as it is (refreshed first only if its
    /// access token is not valid `minimumValidity` more seconds, as
    /// ``validAccessToken(minimumValidity:)`` does).
    ///
    /// Call it when a resource server rejected an access token (HTTP 401): however many requests
    /// were rejected with the same token, and whenever their answers arrive, one refresh at most
    /// reaches the server. The comparison and the start (or join) of the refresh are one step of
    /// the manager: a rejection that arrives after the refresh committed finds the new token and
    /// refreshes nothing. ``refresh()`` cannot promise that: a caller that read the old token just
    /// before a refresh committed would start a second one. `AuthorizedHTTPClient` (in
    /// AuthSessionOAuth2) is built on this.
    ///
    /// A misconfiguration that blocked the last refresh is not retried here (``refresh()`` retries
    /// it): a burst of rejections must not retry it once each.
    ///
    /// - Parameters:
    ///   - rejectedAccessToken: The access token the server rejected.
    ///   - minimumValidity: The seconds a token other than `rejectedAccessToken` must still be
    ///     valid; 30 by default.
    /// - Returns: The session to retry with: refreshed, or the current one if its access token is
    ///   no longer `rejectedAccessToken`.
    /// - Throws: ``ManagedSessionError``: ``ManagedSessionError/notSignedIn``, the refresh's
    ///   failure (the session stands unless ``ManagedSessionError/endsSession``),
    ///   ``ManagedSessionError/refreshUnavailable`` if the session has no refresh token and its
    ///   access token is the rejected one (the session is left as it is), or
    ///   ``ManagedSessionError/cancelled`` (the refresh goes on for other callers).
    public func refresh(
        ifAccessTokenIs rejectedAccessToken: String,
        minimumValidity: TimeInterval = 30
    ) async throws(ManagedSessionError) -> ManagedSession {
        try await waitForSession(minimumValidity: max(0, minimumValidity), rejectedAccessToken: rejectedAccessToken)
    }
}
