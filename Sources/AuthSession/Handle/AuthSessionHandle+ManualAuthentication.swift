import AuthSessionInterface

extension AuthSessionHandle {

    /// Resumes validation (and the biometric prompt) after a biometric failure kept the session.
    ///
    /// Does nothing unless ``isManualAuthenticationRequired`` is `true`, so it is always safe to
    /// call, for example from a "Try again" button. Never signs a signed-out user in.
    public func requestManualAuthentication() {
        submit(.manualAuthenticationRequest)
    }
}
