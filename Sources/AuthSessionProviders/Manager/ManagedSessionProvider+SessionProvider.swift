import AuthSession
import AuthSessionInterface
import Foundation

// The handle's side: `AuthSessionProviderProtocol`, which `AuthSessionHandle` calls.
extension ManagedSessionProvider {

    // MARK: - AuthSessionProviderProtocol

    /// The runtime session: stored, or (after a rotation whose write failed) about to be.
    public var session: ManagedSession? {
        state.withLock { $0.machine.session }
    }

    /// The persisted biometric setting of the session; `false` without one.
    public var isBioMetricAuthenticationEnabled: Bool {
        session?.isBiometricAuthenticationEnabled ?? false
    }

    /// `false`: the manager owns expiry and refreshes before it.
    public var allowsLocalSessionValidation: Bool { false }

    /// `true`: the manager refreshes the session itself.
    public var isSessionAutoRefreshEnabled: Bool { true }

    /// "Unlock your account".
    public func preferredAuthenticationReason() -> String { "Unlock your account" }

    /// Whether a session exists and its user turned biometrics on.
    public func canPerformAuthentication() -> Bool { isBioMetricAuthenticationEnabled }

    /// Whether a failed biometric prompt ends the session: only for the failures in
    /// ``Configuration/biometricFailuresEndingSession`` (`[.failed]` by default), those that say
    /// the person at the device is not its owner. A cancelled prompt, a prompt the system took
    /// down or could not show, a device without biometry keep the session; the handle requires
    /// manual authentication instead.
    ///
    /// - Parameter error: Why the prompt failed.
    /// - Returns: `true` to sign out.
    public func allowsSessionSigningOutOnBiometricAuthenticationFailure(
        with error: BiometricAuthenticationError
    ) -> Bool {
        configuration.biometricFailuresEndingSession.contains(error)
    }

    /// Starts the manager: publishes `fetchingSession`, loads the store (synchronously, so a
    /// stored valid session is signed in before the handle's initializer returns), and listens for
    /// activations and revocations.
    ///
    /// - Parameter eventProxy: Where events go; held weakly.
    public func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        let activation = configuration.activationSignal.observe { [weak self] in
            // In front again: a background refresh's expiry no longer holds back what starts now.
            self?.state.withLock { $0.backgroundRefreshTime = nil }
            self?.removePendingSession()
            // A notice missed while suspended (or never posted) is made up for: read the store.
            if self?.state.withLock({ $0.machine.phase == .ready }) == true {
                self?.storeChanged()
            }
            self?.input { machine, now in machine.activated(now: now) }
            self?.retryPendingRevocationsInBackground()
        }
        let revocationSignal = configuration.revocationSignal ?? remote.credentialRevocationSignal
        let revocation = revocationSignal?.observe { [weak self] in
            self?.handleCredentialRevocation()
        }
        // A sign-out or rotation by another process sharing the store is heard at once.
        let notices = store.changeNotifier?.observe(
            { [weak self] in self?.storeChanged() },
            onFallback: { [weak self] fallback in
                // Said once: the notices still arrive, by polling.
                self?.instrumentation.delivery.send(.changeNoticesFellBack(fallback))
            }
        )
        state.withLock { state in
            state.proxy = eventProxy
            state.observations = [activation] + (revocation.map { [$0] } ?? [])
            state.noticeObservation = notices
        }
        input { machine, _ in machine.launch() }
    }

    /// Signs out: local first (the runtime session, the store, the event), then the refresh token
    /// is revoked at the backend, best effort, without waiting for it.
    ///
    /// It removes only what this process owns: the stored session descending from its sign-in
    /// (a rotation another process made included), never a sign-in another process made since.
    /// With no session here it removes nothing once the launch read the store, so calling it to
    /// tidy up after hearing a sign-out is safe.
    ///
    /// - Parameter error: Why (a biometric failure, say), or `nil` for a voluntary sign-out.
    /// - Throws: ``ManagedSessionError/storage(_:)`` when the stored session could not be
    ///   removed. The user is signed out in memory all the same.
    public func signout(with error: (any Error)?) throws {
        if let removeError = performSignOut(
            error: error,
            reason: error as? ManagedSessionError,
            ifGeneration: nil,
            revokes: configuration.revokesOnSignOut
        ) {
            throw ManagedSessionError.storage(removeError)
        }
    }
}
