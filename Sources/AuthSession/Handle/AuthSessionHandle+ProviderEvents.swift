import AuthSessionInterface

extension AuthSessionHandle {

    /// Maps one provider event onto the state machine (the event table of the primary spec).
    ///
    /// Runs synchronously on the publishing thread: when `publish` returns, the status reflects
    /// the event and every observer's callbacks are enqueued.
    func receive(_ event: AuthSessionEvent) {
        let session = sessionProvider.session
        switch event {
        case .fetchingSession:
            run(session: session) { $0.fetchingSession() }
        case .sessionFetched(let isInitialFetch):
            let snapshot = snapshot(of: session)
            run(session: session) { $0.sessionFetched(isInitialFetch: isInitialFetch, snapshot: snapshot) }
        case .sessionFetchFailed(let error):
            let snapshot = snapshot(of: session)
            run(session: session) { $0.sessionFetchFailed(error, snapshot: snapshot) }
        case .sessionSignIn:
            run(session: session) { $0.sessionSignIn() }
        case .sessionSignedOut(let error):
            run(session: session) { $0.sessionSignedOut(error: error) }
        case .sessionUpdated(let updatedSession):
            run(session: session) { $0.sessionUpdated(updatedSession) }
        case .unexpectedError(let error):
            run(session: session) { $0.unexpectedError(error) }
        }
    }

    /// Asks the provider to sign out; a thrown error reaches observers as
    /// ``AuthSessionInterface/AuthSessionError/signingOutFailure(error:)``.
    func signOut(_ reason: SignOutReason) {
        do {
            try sessionProvider.signout(with: reason.error)
        } catch {
            run(session: sessionProvider.session) { $0.signOutFailed(error) }
        }
    }
}
