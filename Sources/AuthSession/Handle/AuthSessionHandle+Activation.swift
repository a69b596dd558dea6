import AuthSessionInterface

extension AuthSessionHandle {

    /// Resumes validation (and the biometric prompt) after a biometric failure kept the session.
    ///
    /// Does nothing unless ``isManualAuthenticationRequired`` is `true`, so it is always safe to
    /// call, for example from a "Try again" button. Never signs a signed-out user in.
    public func requestManualAuthentication() {
        runReadingWorld { $0.requestManualAuthentication(snapshot: $1) }
    }

    /// The app became active: the first activation (and the first after a prompt) only arms
    /// revalidation; later ones revalidate the session.
    func applicationDidBecomeActive() {
        runReadingWorld { $0.applicationDidBecomeActive(snapshot: $1) }
    }
}
