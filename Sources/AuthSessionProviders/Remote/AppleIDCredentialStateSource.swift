import Foundation

/// Where the state of a Sign in with Apple credential comes from: Apple's
/// `ASAuthorizationAppleIDProvider` in an app (``AppleIDProviderCredentialStateSource``), a
/// simulated provider in tests (`SimulatedAppleIDProvider` in AuthSessionMocks).
///
/// Conformers must be thread-safe; calls may overlap.
public protocol AppleIDCredentialStateSource: Sendable {

    /// The state of `userID`'s credential for this app.
    ///
    /// - Parameter userID: The Apple user identifier (the identity token's `sub`).
    /// - Returns: The state; anything but ``CredentialState/authorized`` ends the session.
    /// - Throws: ``RemoteAuthError``: transient when the source cannot answer now (which changes
    ///   nothing), a misconfiguration where there is no source (which changes nothing either).
    func credentialState(forUserID userID: String) async throws(RemoteAuthError) -> CredentialState
}

/// Sign in with Apple's own credential state, from `ASAuthorizationAppleIDProvider`.
///
/// On a platform without AuthenticationServices (Linux, watchOS here) every check throws
/// ``RemoteAuthError/Reason/unsupported(_:)``, a misconfiguration that changes nothing: the
/// session stands until it is signed out or revoked by other means.
///
/// All operations are thread-safe.
public struct AppleIDProviderCredentialStateSource: AppleIDCredentialStateSource {

    /// Creates the source.
    public init() {}

    /// Asks Apple for `userID`'s credential state (see ``CredentialState`` for what each answer
    /// does; an answer that carries an error is read as `AppleIDCredentialState.current(forUserID:)` says).
    ///
    /// - Parameter userID: The Apple user identifier.
    /// - Returns: The state.
    /// - Throws: ``RemoteAuthError``.
    public func credentialState(forUserID userID: String) async throws(RemoteAuthError) -> CredentialState {
        #if canImport(AuthenticationServices) && !os(watchOS)
        try await AppleIDCredentialState.current(forUserID: userID)
        #else
        throw RemoteAuthError(.unsupported("Sign in with Apple's credential state on this platform"))
        #endif
    }
}
