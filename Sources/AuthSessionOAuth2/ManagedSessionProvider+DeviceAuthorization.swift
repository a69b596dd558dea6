import AuthSession
import AuthSessionProviders
import Foundation

extension ManagedSessionProvider {

    /// Signs in with the device flow (RFC 8628): polls the manager's `remote` with
    /// `authorization`'s device code until the user approves, then stores the session as a
    /// sign-in with an `AuthGrant` does.
    ///
    /// ```swift
    /// let authorization = try await service.startDeviceAuthorization()
    /// print("Open \(authorization.verificationURI) and enter \(authorization.userCode)")
    /// let session = try await provider.signIn(with: authorization)
    /// ```
    ///
    /// Polling runs on the manager's `clock` as ``OAuth2Service/pollDeviceAuthorization(_:)``
    /// says: every ``DeviceAuthorization/interval`` seconds, 5 more after each `slow_down`, a
    /// backoff after a transient failure, until ``DeviceAuthorization/expiresAt``. The manager's
    /// `retryPolicy` never runs it: a pending answer is not a failure. Everything else is what a
    /// sign-in with a grant does: the session is stored first, a profile is merged, a sign-out
    /// or another sign-in meanwhile supersedes this one, and tokens that cannot be stored are
    /// revoked. A failure leaves the session there was.
    ///
    /// - Parameter authorization: What ``OAuth2Service/startDeviceAuthorization(scope:)``
    ///   returned, from the service this manager's remote is.
    /// - Returns: The new session.
    /// - Throws: `ManagedSessionError`: `remote` with `expired_token` when the codes expire (at
    ///   the server, or on the clock), `access_denied` when the user declines, or another error
    ///   that is not transient; `cancelled` when the calling task is cancelled (no poll is sent
    ///   after that); `superseded` or `storage` when committing.
    @discardableResult
    public func signIn(with authorization: DeviceAuthorization) async throws(ManagedSessionError) -> ManagedSession {
        try await signIn(
            grantType: AuthGrant.deviceCode(authorization.deviceCode).grantType,
            obtainingTokens: { () throws(RemoteAuthError) -> IssuedTokens in
                try await authorization.poll(on: clock) { grant throws(RemoteAuthError) in
                    try await remote.obtainTokens(with: grant)
                }
            }
        )
    }
}
