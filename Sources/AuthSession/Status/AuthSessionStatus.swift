import AuthSessionInterface

/// The status of a session, as reported by `AuthSessionHandle`.
///
/// A new handle starts in ``syncing``. ``validating`` is transient: the handle enters and leaves
/// it within one step, so observers see it pass by but never find the handle resting in it.
/// ``biometricAuthentication`` means a biometric prompt decides the session: one is on screen, or
/// is about to be (while an abandoned one is taken down). A prompt whose session ended does not
/// keep it; a `fetchingSession` while a prompt is up moves to ``syncing`` with the prompt still
/// deciding.
public enum AuthSessionStatus: Hashable, Sendable, CaseIterable, AuthSessionStatusProtocol, CustomStringConvertible {

    /// The session is being fetched or refreshed. The status of a new handle.
    case syncing

    /// A usable session exists.
    case signedIn

    /// There is no usable session.
    case signedOut

    /// The stored session is being checked (expiry, biometric policy).
    case validating

    /// A biometric prompt gates the session: on screen, or about to be.
    case biometricAuthentication

    /// Whether the status is ``syncing``.
    public var isSyncing: Bool { self == .syncing }

    /// Whether the status is ``signedIn``.
    public var isSignedIn: Bool { self == .signedIn }

    /// Whether the status is ``signedOut``.
    public var isSignedOut: Bool { self == .signedOut }

    /// Whether the status is ``validating``.
    public var isValidating: Bool { self == .validating }

    /// Whether the status is ``biometricAuthentication``.
    public var isBiometricAuthentication: Bool { self == .biometricAuthentication }

    /// The case name, for example `signedIn`.
    public var description: String {
        switch self {
        case .syncing: "syncing"
        case .signedIn: "signedIn"
        case .signedOut: "signedOut"
        case .validating: "validating"
        case .biometricAuthentication: "biometricAuthentication"
        }
    }

    /// Whether a biometric prompt may start from this status: signed in, syncing or validating.
    var allowsBiometricAuthentication: Bool {
        switch self {
        case .signedIn, .syncing, .validating: true
        case .signedOut, .biometricAuthentication: false
        }
    }

    /// Whether local validation may start from this status: signed in or syncing.
    var allowsLocalValidation: Bool {
        switch self {
        case .signedIn, .syncing: true
        case .signedOut, .validating, .biometricAuthentication: false
        }
    }
}
