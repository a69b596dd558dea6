import AuthSessionInterface

extension AuthSessionHandle {

    /// Maps one provider event onto the state machine (the event table of the primary spec).
    ///
    /// Runs synchronously on the publishing thread: when `publish` returns, the status reflects
    /// the event and every observer's callbacks are enqueued.
    func receive(_ event: AuthSessionEvent) {
        switch event {
        case .fetchingSession:
            run { $0.fetchingSession() }
        case .sessionFetched(let isInitialFetch):
            runReadingWorld { $0.sessionFetched(isInitialFetch: isInitialFetch, snapshot: $1) }
        case .sessionFetchFailed(let error):
            runReadingWorld { $0.sessionFetchFailed(error, snapshot: $1) }
        case .sessionSignIn:
            run { $0.sessionSignIn() }
        case .sessionSignedOut(let error):
            run { $0.sessionSignedOut(error: error) }
        case .sessionUpdated(let updatedSession):
            run { $0.sessionUpdated(updatedSession) }
        case .unexpectedError(let error):
            run { $0.unexpectedError(error) }
        }
    }

    /// Asks the provider to sign out; a thrown error reaches observers as
    /// `AuthSessionError.signingOutFailure(error:)`.
    func signOut(_ reason: SignOutReason) {
        do {
            try sessionProvider.signout(with: reason.error)
        } catch {
            run { $0.signOutFailed(error) }
        }
    }
}
