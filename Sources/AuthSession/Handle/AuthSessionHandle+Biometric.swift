import AuthSessionInterface

extension AuthSessionHandle {

    /// Presents prompt `id` from a task of its own and hands its outcome back as an input.
    ///
    /// The task holds the handle weakly while the prompt is up: an outcome that arrives after the
    /// handle is gone is dropped. A task cancelled before it starts (its session ended first)
    /// never shows the prompt and reports `.canceledBySystem`. The task ends once the outcome has
    /// been applied, which is what ``waitForBiometricPrompt()`` waits for.
    func presentBiometricPrompt(_ id: BiometricPromptID) {
        let reason = sessionProvider.preferredAuthenticationReason()
        let authenticator = biometricAuthenticator
        let task = Task { [weak self] in
            let result: Result<Void, BiometricAuthenticationError>
            if Task.isCancelled {
                result = .failure(.canceledBySystem)
            } else {
                do throws(BiometricAuthenticationError) {
                    try await authenticator.authenticate(reason: reason)
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
            }
            guard let handle = self else { return }
            await withCheckedContinuation { (applied: CheckedContinuation<Void, Never>) in
                handle.submit(.biometricPromptCompleted(id, result, onApplied: { applied.resume() }))
            }
        }
        state.withLock { $0.biometricPromptTask = (id, task) }
    }

    /// Takes prompt `id` down, if it is still the latest: cancelling its task ends the
    /// authenticator's prompt (LocalAuthentication invalidates its context).
    func cancelBiometricPrompt(_ id: BiometricPromptID) {
        let task = state.withLock { state in
            state.biometricPromptTask.flatMap { $0.id == id ? $0.task : nil }
        }
        task?.cancel()
    }

    /// Returns once no biometric prompt this handle started is in process: the latest one (and
    /// any presented in its place) has been dismissed and its outcome applied, or ignored because
    /// the session moved on.
    ///
    /// Useful in a command-line client that must not proceed while the gate is up, and in tests.
    /// Returns at once when no prompt was started. Call it after the input that presents the
    /// prompt has been applied (see ``waitUntilIdle()``).
    public func waitForBiometricPrompt() async {
        var awaited: BiometricPromptID?
        while let latest = state.withLock({ $0.biometricPromptTask }), latest.id != awaited {
            await latest.task.value
            awaited = latest.id
        }
    }
}
