/// The owner of the session data: fetches, refreshes, signs in and out, and answers the policy
/// questions a session handle asks.
///
/// A handle calls ``initializeSessionProvider(for:)`` once, from its initializer, with the
/// ``AuthSessionEventProxy`` the provider publishes lifecycle events through. Keep that proxy
/// weakly: the handle owns it.
///
/// The handle reads ``session`` and the policy members from whichever thread drives it, so
/// conformers must be thread-safe.
///
/// | Policy | Default | Meaning |
/// | --- | --- | --- |
/// | ``allowsLocalSessionValidation`` | `true` | The handle checks expiry locally at launch and on foreground. |
/// | ``isSessionAutoRefreshEnabled`` | `false` | The provider refreshes tokens itself. |
/// | ``allowsSessionSigningOutOnBiometricAuthenticationFailure(with:)`` | `true` | A failed biometric prompt signs the user out. |
public protocol AuthSessionProviderProtocol: BiometricAuthenticationRequestor {

    /// The session model this provider vends.
    associatedtype AuthSession: AuthSessionProtocol

    /// The current session, or `nil` when there is none.
    var session: AuthSession? { get }

    /// Whether the user has turned biometric authentication on.
    var isBioMetricAuthenticationEnabled: Bool { get }

    /// Whether the handle may validate the session locally (expiry checks) at launch and when the
    /// app becomes active. Defaults to `true`.
    var allowsLocalSessionValidation: Bool { get }

    /// Whether the provider refreshes the session itself before it expires. Defaults to `false`.
    var isSessionAutoRefreshEnabled: Bool { get }

    /// Starts the provider and hands it the proxy to publish lifecycle events through.
    ///
    /// Called exactly once, from the handle's initializer, after the handle is fully wired: events
    /// published synchronously from inside this method are handled like any other.
    ///
    /// - Parameter eventProxy: Where to publish ``AuthSessionEvent`` values; hold it weakly.
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy)

    /// Turns biometric authentication on or off.
    ///
    /// - Parameter isEnabled: `true` to gate the session behind a biometric prompt.
    func setBioMetricAuthentication(_ isEnabled: Bool)

    /// Ends the session.
    ///
    /// When the sign-out is done, publish ``AuthSessionEvent/sessionSignedOut(error:)`` (from
    /// inside this method or later) so observers hear the logout.
    ///
    /// - Parameter error: Why the session ends (for example ``AuthSessionError/sessionExpired``
    ///   or a ``BiometricAuthenticationError``), or `nil` for a voluntary sign-out.
    /// - Throws: Any error that stopped the sign-out.
    func signout(with error: (any Error)?) throws

    /// Whether a failed biometric prompt should end the session.
    ///
    /// Return `false` to keep the session: the handle then stays signed in, requires manual
    /// authentication and reports ``AuthSessionError/biometricAuthFailure(error:)``. Defaults to
    /// `true` for every error.
    ///
    /// - Parameter error: Why the prompt failed.
    func allowsSessionSigningOutOnBiometricAuthenticationFailure(with error: BiometricAuthenticationError) -> Bool
}

extension AuthSessionProviderProtocol {

    /// `true`: the handle validates the session locally unless the provider says otherwise.
    public var allowsLocalSessionValidation: Bool { true }

    /// `false`: the provider does not refresh tokens itself unless it says otherwise.
    public var isSessionAutoRefreshEnabled: Bool { false }

    /// `true`: any biometric failure ends the session unless the provider says otherwise.
    public func allowsSessionSigningOutOnBiometricAuthenticationFailure(
        with error: BiometricAuthenticationError
    ) -> Bool {
        true
    }

    /// Signs out voluntarily: the same as `signout(with: nil)`.
    ///
    /// - Throws: Any error that stopped the sign-out.
    public func signout() throws {
        try signout(with: nil)
    }
}
