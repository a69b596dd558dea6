/// The state of an authentication session, asked as questions rather than matched as cases.
///
/// UI layers and feature modules use these queries to drive screens without depending on the
/// engine's concrete status enum. Exactly one of the five queries is `true` for a conforming
/// status.
public protocol AuthSessionStatusProtocol: Sendable {

    /// The session is being fetched or refreshed.
    var isSyncing: Bool { get }

    /// A usable session exists and the user is signed in.
    var isSignedIn: Bool { get }

    /// There is no usable session; the user must sign in.
    var isSignedOut: Bool { get }

    /// The stored session is being checked locally (expiry, policy).
    var isValidating: Bool { get }

    /// A biometric prompt gates the session.
    var isBiometricAuthentication: Bool { get }
}

extension AuthSessionStatusProtocol {

    /// Whether the session's fate is still being decided: syncing, validating or waiting on a
    /// biometric prompt.
    ///
    /// Show a splash or progress screen while this is `true`; never the sign-in screen.
    public var isLoadingStatus: Bool {
        isSyncing || isValidating || isBiometricAuthentication
    }
}
