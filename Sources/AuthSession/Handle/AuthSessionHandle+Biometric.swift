import AuthSessionInterface

extension AuthSessionHandle {

    /// Presents prompt `id` from a task of its own and feeds its outcome back to the machine.
    ///
    /// The task first checks that the prompt still matters (a sign-out may have happened since
    /// the step that asked for it) and drops it otherwise. It holds the handle weakly: an outcome
    /// that arrives after the handle is gone is dropped.
    func presentBiometricPrompt(_ id: BiometricPromptID) {
        let reason = sessionProvider.preferredAuthenticationReason()
        let authenticator = biometricAuthenticator
        let task = Task { [weak self] in
            // The session may have moved on since the step that asked for this prompt.
            guard self?.state.withLock({ $0.machine.biometricPromptWillPresent(id) }) == true else { return }
            let result: Result<Void, BiometricAuthenticationError>
            do throws(BiometricAuthenticationError) {
                try await authenticator.authenticate(reason: reason)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            self?.biometricPromptCompleted(id, result: result)
        }
        state.withLock { state in
            // A fast prompt may store its task after the next one started: keep the newest.
            if state.biometricPromptTask.map({ $0.id.rawValue < id.rawValue }) ?? true {
                state.biometricPromptTask = (id, task)
            }
        }
    }

    /// Returns once the biometric prompt this handle started (if any) has been dismissed and its
    /// outcome applied, or ignored because the session moved on.
    ///
    /// Useful in a command-line client that must not proceed while the gate is up, and in tests.
    /// Returns at once when no prompt was started. Call it after the input that presents the
    /// prompt has returned: the prompt's task is registered as that input finishes.
    public func waitForBiometricPrompt() async {
        await state.withLock { $0.biometricPromptTask }?.task.value
    }

    /// Applies the outcome of prompt `id`, consulting the provider's failure policy first.
    func biometricPromptCompleted(_ id: BiometricPromptID, result: Result<Void, BiometricAuthenticationError>) {
        var allowsSigningOut = false
        if case .failure(let error) = result {
            allowsSigningOut = sessionProvider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: error)
        }
        runReadingWorld {
            $0.biometricPromptCompleted(id, result: result, snapshot: $1, allowsSigningOut: allowsSigningOut)
        }
    }
}
