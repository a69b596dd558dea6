import AuthSession
import AuthSessionInterface
import Foundation

// The credential check, and which stored sessions this manager may use.
extension ManagedSessionProvider {

    func checkCredential(_ session: ManagedSession, generation: UInt64) {
        beginOperation()
        let remote = remote
        // Weak: a verdict for a manager the app released starts nothing (a confirming refresh,
        // a sign-out).
        Task { [weak self] in
            let result: Result<CredentialState, RemoteAuthError>
            do throws(RemoteAuthError) {
                result = .success(try await remote.credentialState(for: session))
            } catch {
                result = .failure(error)
            }
            guard let self else { return }
            instrumentation.delivery.send(.credentialChecked(result))
            input { machine, _ in machine.credentialChecked(result, of: session, generation: generation) }
            endOperation()
        }
    }

    /// Whether `error` is the store refusing what it found (permissions, owner, a link, not a
    /// file): nothing a retry or a sign-in mends; the app or the person must.
    /// `stored`, if this manager's backend may use it: a session that records an origin the
    /// backend's is not compatible with is ``SessionStoreError/issuedToAnotherClient(stored:configured:)``.
    func usable(_ stored: ManagedSession?) throws(SessionStoreError) -> ManagedSession? {
        if let stored, let recorded = stored.origin, let configured = remote.sessionOrigin,
            !recorded.isCompatible(with: configured)
        {
            throw .issuedToAnotherClient(stored: recorded, configured: configured)
        }
        return stored
    }

    /// The stored session if this manager's backend may use it, `nil` for none or for another
    /// origin's: what a removal or an adoption reads, so neither ever touches a session issued
    /// to another client.
    func loadOurs() throws(SessionStoreError) -> ManagedSession? {
        do throws(SessionStoreError) {
            return try usable(store.load())
        } catch .issuedToAnotherClient {
            return nil
        }
    }

    /// Whether something issued to `recorded` may be sent with a backend configured for
    /// `configured`: compatible origins, or either unknown.
    static func isOurs(_ recorded: SessionOrigin?, configured: SessionOrigin?) -> Bool {
        guard let recorded, let configured else { return true }
        return recorded.isCompatible(with: configured)
    }

    static func isRefusal(_ error: SessionStoreError) -> Bool {
        switch error {
        case .insecurePermissions, .foreignOwner, .symbolicLink, .notARegularFile: true
        default: false
        }
    }
}
