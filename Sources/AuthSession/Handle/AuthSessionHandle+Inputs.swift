import AuthSessionInterface
import Dispatch

extension AuthSessionHandle {

    /// How many inputs a thread applies in one go, its own first, before it hands what is left
    /// to a background queue: a caller that brings one input never works for others without end.
    static var inputsAppliedPerCall: Int { 32 }

    /// What an input decides from, read from the provider and the clock just before its step.
    struct World {
        /// The provider's session, passed to observers with the step's callbacks.
        var session: AuthSessionProvider.AuthSession?
        /// The user an observation model shows after the step.
        var user: (any AuthSessionUserProtocol)?
        /// Expiry and policies, for the inputs that decide from them.
        var snapshot: SessionSnapshot?
        /// The provider's failure policy, for a prompt that failed.
        var allowsSigningOut = false
    }

    /// Hands `input` to the handle: applies it (and whatever arrives meanwhile) now if no other
    /// thread is applying inputs, otherwise leaves it to that thread.
    func submit(_ input: HandleInput) {
        let mustApply = state.withLock { $0.inputs.add(input) }
        if mustApply {
            applyInputs(limit: Self.inputsAppliedPerCall)
        }
    }

    /// Applies queued inputs one at a time until none is left, or until `limit` have been applied
    /// and the rest is handed to a background queue. Called by the one thread that applies.
    ///
    /// For each input: the world is read (provider calls, no lock held), the machine steps and
    /// the step's notifications are handed to every observer (one critical section), then the
    /// step's calls out are made (no lock held). The next input's read comes after all of that,
    /// so no step ever decides from a read that an earlier step made stale.
    private func applyInputs(limit: Int?) {
        var applied = 0
        var next = state.withLock { $0.inputs.next() }
        while let input = next {
            let world = readWorld(for: input)
            let (effects, released) = state.withLock { state in
                apply(input, world: world, to: &state)
            }
            withExtendedLifetime(released) {}  // the previous step's session, released unlocked
            perform(effects)
            if case .biometricPromptCompleted(_, _, let onApplied) = input {
                onApplied()
            }
            applied += 1
            let handsOff = limit.map { applied >= $0 } ?? false
            let (following, idle, mustHandOff) = state.withLock { state in
                let idle = state.inputs.markApplied()
                if handsOff && !state.inputs.isEmpty {
                    return (nil as HandleInput?, idle, true)
                }
                return (state.inputs.next(), idle, false)
            }
            for waiter in idle {
                waiter.resume()
            }
            if mustHandOff {
                DispatchQueue.global().async { self.applyInputs(limit: nil) }
            }
            next = following
        }
    }

    /// Reads what `input` needs of the world. Runs with no lock held: it calls the provider.
    private func readWorld(for input: HandleInput) -> World {
        let session = sessionProvider.session
        var world = World(session: session, user: session?.user)
        switch input {
        case .event(.sessionFetched), .event(.sessionFetchFailed), .activation, .manualAuthenticationRequest:
            world.snapshot = snapshot(of: session)
        case .event(.sessionUpdated(let updated)):
            world.user = updated?.user
        case .biometricPromptCompleted(_, let result, _):
            world.snapshot = snapshot(of: session)
            if case .failure(let error) = result {
                world.allowsSigningOut = sessionProvider.allowsSessionSigningOutOnBiometricAuthenticationFailure(
                    with: error
                )
            }
        case .event, .signOutFailed:
            break
        }
        return world
    }

    /// One step, with the lock held: runs the machine, hands the step's notifications to every
    /// observer, and records what the step saw.
    ///
    /// - Returns: The actions to perform once the lock is released, and the previous step's
    ///   session and user (releasing them may run a `deinit`: do it unlocked).
    private func apply(
        _ input: HandleInput,
        world: World,
        to state: inout HandleState
    ) -> (effects: [SessionAction], released: Any?) {
        let actions = step(input, world: world, machine: &state.machine)
        let released: Any? = (state.lastSession, state.lastUser)
        state.lastSession = world.session
        state.lastUser = world.user
        let effects = dispatch(actions, session: world.session, in: state)
        return (effects, released)
    }

    /// The machine input for `input` (the event table of the primary spec, and the handle's own
    /// inputs).
    private func step(_ input: HandleInput, world: World, machine: inout SessionStateMachine) -> [SessionAction] {
        let snapshot = world.snapshot ?? .unread
        switch input {
        case .event(.fetchingSession):
            return machine.fetchingSession()
        case .event(.sessionFetched(let isInitialFetch)):
            return machine.sessionFetched(isInitialFetch: isInitialFetch, snapshot: snapshot)
        case .event(.sessionFetchFailed(let error)):
            return machine.sessionFetchFailed(error, snapshot: snapshot)
        case .event(.sessionSignIn):
            return machine.sessionSignIn()
        case .event(.sessionSignedOut(let error)):
            return machine.sessionSignedOut(error: error)
        case .event(.sessionUpdated(let updated)):
            return machine.sessionUpdated(updated)
        case .event(.unexpectedError(let error)):
            return machine.unexpectedError(error)
        case .activation:
            return machine.applicationDidBecomeActive(snapshot: snapshot)
        case .manualAuthenticationRequest:
            return machine.requestManualAuthentication(snapshot: snapshot)
        case .biometricPromptCompleted(let id, let result, _):
            return machine.biometricPromptCompleted(
                id,
                result: result,
                snapshot: snapshot,
                allowsSigningOut: world.allowsSigningOut
            )
        case .signOutFailed(let error):
            return machine.signOutFailed(error)
        }
    }

    /// What the machine needs to know about the world, read from the provider and the clock.
    func snapshot(of session: AuthSessionProvider.AuthSession?) -> SessionSnapshot {
        let now = clock.now
        return SessionSnapshot(
            session: session.map {
                SessionSnapshot.Expiry(expiresIn: $0.expiresIn(at: now), isSessionExpired: $0.isSessionExpired(at: now))
            },
            allowsLocalSessionValidation: sessionProvider.allowsLocalSessionValidation,
            isSessionAutoRefreshEnabled: sessionProvider.isSessionAutoRefreshEnabled,
            canPerformAuthentication: sessionProvider.canPerformAuthentication()
        )
    }

    /// Performs, in order, the actions that call out of the handle; never with the lock held.
    private func perform(_ effects: [SessionAction]) {
        for effect in effects {
            switch effect {
            case .notify:
                preconditionFailure("notifications are handed over under the lock")
            case .presentBiometricPrompt(let id):
                presentBiometricPrompt(id)
            case .cancelBiometricPrompt(let id):
                cancelBiometricPrompt(id)
            case .signOut(let reason):
                signOut(reason)
            }
        }
    }

    /// Asks the provider to sign out; a thrown error reaches observers as
    /// `AuthSessionError.signingOutFailure(error:)`, after whatever the provider published.
    private func signOut(_ reason: SignOutReason) {
        do {
            try sessionProvider.signout(with: reason.error)
        } catch {
            submit(.signOutFailed(error))
        }
    }
}
