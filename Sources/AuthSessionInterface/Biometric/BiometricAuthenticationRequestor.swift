/// A type that asks for biometric authentication (Face ID, Touch ID, Optic ID) and says when it
/// may be asked for.
///
/// ``AuthSessionProviderProtocol`` refines this protocol: the session provider words the system
/// prompt and decides whether biometrics are in play at all.
public protocol BiometricAuthenticationRequestor: AnyObject, Sendable {

    /// The reason shown in the system biometric prompt, for example "Unlock your account".
    func preferredAuthenticationReason() -> String

    /// Whether a biometric prompt may be presented now.
    ///
    /// Return `false` when the user has not turned biometrics on, or the provider is in a state
    /// where a prompt makes no sense. The handle asks before every prompt.
    func canPerformAuthentication() -> Bool
}
