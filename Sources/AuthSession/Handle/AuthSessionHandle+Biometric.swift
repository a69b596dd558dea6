import AuthSessionInterface

extension AuthSessionHandle {

    /// Presents prompt `id` from a task of its own and feeds its outcome back to the machine.
    ///
    /// The task holds the handle weakly: an outcome that arrives after the handle is gone is
    /// dropped.
    func presentBiometricPrompt(_ id: BiometricPromptID) {
        let reason = sessionProvider.preferredAuthenticationReason()
        let authenticator = biometricAuthenticator
        Task { [weak self] in
            let result: Result<Void, BiometricAuthenticationError>
            do throws(BiometricAuthenticationError) {
                try await authenticator.authenticate(reason: reason)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            self?.biometricPromptCompleted(id, result: result)
        }
    }

    /// Applies the outcome of prompt `id`, consulting the provider's failure policy first.
    func biometricPromptCompleted(_ id: BiometricPromptID, result: Result<Void, BiometricAuthenticationError>) {
        var allowsSigningOut = false
        if case .failure(let error) = result {
            allowsSigningOut = sessionProvider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: error)
        }
        run(session: sessionProvider.session) {
            $0.biometricPromptCompleted(id, result: result, allowsSigningOut: allowsSigningOut)
        }
    }
}
