import AuthSessionInterface

extension AuthSessionHandle {

    /// Resumes validation (and the biometric prompt) after a biometric failure kept the session.
    ///
    /// Does nothing unless ``isManualAuthenticationRequired`` is `true`, so it is always safe to
    /// call, for example from a "Try again" button. Never signs a signed-out user in.
    public func requestManualAuthentication() {
        let session = sessionProvider.session
        let snapshot = snapshot(of: session)
        run(session: session) { $0.requestManualAuthentication(snapshot: snapshot) }
    }

    /// The app became active: the first activation (and the first after a prompt) only arms
    /// revalidation; later ones revalidate the session.
    func applicationDidBecomeActive() {
        let session = sessionProvider.session
        let snapshot = snapshot(of: session)
        run(session: session) { $0.applicationDidBecomeActive(snapshot: snapshot) }
    }
}
