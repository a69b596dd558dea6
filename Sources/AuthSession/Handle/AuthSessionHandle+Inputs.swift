import AuthSessionInterface
import Dispatch

extension AuthSessionHandle {

    /// How many inputs a thread applies in one go, its own first, before it hands what is left
    /// to a background queue: a caller that brings one input never works for others without end.
    static var inputsAppliedPerCall: Int { 32 }

    /// Hands `input` to the handle: applies it (and whatever arrives meanwhile) now if no other
    /// thread is applying inputs, otherwise leaves it to that thread.
    func submit(_ input: HandleInput) {
        let (first, readsUser) = state.withLock { ($0.inputs.add(input), $0.streams.hasObservationConsumers) }
        if let first {
            applyInputs(startingWith: first, readingUser: readsUser, limit: Self.inputsAppliedPerCall)
        }
    }

    /// Applies `first`, then queued inputs one at a time until none is left, or until `limit`
    /// have been applied and the rest is handed to a background queue. Called by the one thread
    /// that applies inputs.
    ///
    /// For each input: the world is read (provider calls, no lock held), the machine steps and
    /// the step's notifications are handed to every observer (one critical section), then the
    /// step's calls out are made (no lock held). The next input's read comes after all of that,
    /// so no step ever decides from a read that an earlier step made stale.
    ///
    /// - Parameter readingUser: Whether an observation model follows the handle, so that steps
    ///   read the user for it.
    private func applyInputs(startingWith first: HandleInput, readingUser: Bool, limit: Int?) {
        var applied = 0
        var next: HandleInput? = first
        var readsUser = readingUser
        while let input = next {
            let world = readWorld(for: input, readingUser: readsUser)
            applied += 1
            let handsOff = limit.map { applied >= $0 } ?? false
            let onApplied: (@Sendable () -> Void)?
            if case .biometricPromptCompleted(_, _, let callback) = input {
                onApplied = callback
            } else {
                onApplied = nil
            }
            let outcome = state.withLock { state in
                state.inputs.endRead()
                var outcome = apply(input, world: world, to: &state)
                if outcome.effects.isEmpty && onApplied == nil {
                    // Nothing to do outside the lock: finish here and take the next input.
                    outcome.finish = finishInput(&state, handsOff: handsOff)
                }
                return outcome
            }
            let finish: InputFinish
            if let finished = outcome.finish {
                finish = finished
            } else {
                perform(outcome.effects)
                onApplied?()
                finish = state.withLock { finishInput(&$0, handsOff: handsOff) }
            }
            for waiter in finish.idle {
                waiter.resume()
            }
            if finish.handsOff {
                DispatchQueue.global().async {
                    let (input, readsUser) = self.state.withLock { $0.nextInput() }
                    if let input {
                        self.applyInputs(startingWith: input, readingUser: readsUser, limit: nil)
                    }
                }
            }
            next = finish.next
            readsUser = finish.readsUser
        }
    }

    /// Records an applied input and takes the next one, unless the applying thread has done its
    /// share and the rest goes to a background queue (which keeps applying, so the handle stays
    /// "applying" meanwhile).
    private func finishInput(_ state: inout HandleState, handsOff: Bool) -> InputFinish {
        let idle = state.inputs.markApplied()
        if handsOff && !state.inputs.isEmpty {
            return InputFinish(next: nil, readsUser: false, idle: idle, handsOff: true)
        }
        let (next, readsUser) = state.nextInput()
        return InputFinish(next: next, readsUser: readsUser, idle: idle, handsOff: false)
    }

    /// Reads what `input` needs of the world. Runs with no lock held: it calls the provider.
    ///
    /// The user is read only for an observation model (`readingUser`, or the model's own
    /// registration): reading it calls the provider's session's `user`, possibly computed.
    private func readWorld(for input: HandleInput, readingUser: Bool) -> InputWorld {
        let session = sessionProvider.session
        var world = InputWorld(session: session)
        switch input {
        case .event(.sessionUpdated(let updated)) where readingUser:
            world.user = updated?.user
        case .observe:
            world.user = session?.user
        default:
            if readingUser {
                world.user = session?.user
            }
        }
        switch input {
        case .event(.sessionFetched), .event(.sessionFetchFailed), .activation, .manualAuthenticationRequest:
            world.snapshot = snapshot(of: session)
        case .biometricPromptCompleted(_, let result, _):
            world.snapshot = snapshot(of: session)
            if case .failure(let error) = result {
                world.allowsSigningOut = sessionProvider.allowsSessionSigningOutOnBiometricAuthenticationFailure(
                    with: error
                )
            }
        case .event, .signOutFailed, .observe, .reconcile:
            break
        }
        return world
    }

    /// One step, with the lock held: runs the machine and hands the step's notifications to
    /// every observer. A model's registration instead gives it the state now and registers it.
    private func apply(_ input: HandleInput, world: InputWorld, to state: inout HandleState) -> AppliedInput {
        if case .observe(let continuation, let id) = input {
            let update = Self.observationUpdate([], user: world.user, state: state)
            if case .enqueued = continuation.yield(update) {
                state.streams.add(continuation, id: id)
            }
            return AppliedInput(effects: [])
        }
        let actions = step(input, world: world, machine: &state.machine)
        return AppliedInput(effects: dispatch(actions, session: world.session, user: world.user, in: state))
    }

    /// The machine input for `input` (the event table of the primary spec, and the handle's own
    /// inputs).
    private func step(_ input: HandleInput, world: InputWorld, machine: inout SessionStateMachine) -> [SessionAction] {
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
        case .observe:
            return []
        case .reconcile:
            return machine.reconcile(hasSession: world.session != nil)
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

/// What an input decides from, read from the provider and the clock just before its step.
///
/// Not generic (unlike the handle), so that using it costs no runtime metadata lookup.
struct InputWorld {
    /// The provider's session, passed to observers with the step's callbacks.
    var session: (any AuthSessionProtocol)?
    /// The user an observation model shows after the step; read only while one follows.
    var user: (any AuthSessionUserProtocol)?
    /// Expiry and policies, for the inputs that decide from them.
    var snapshot: SessionSnapshot?
    /// The provider's failure policy, for a prompt that failed.
    var allowsSigningOut = false
}

/// What a step leaves to do once its lock is released.
struct AppliedInput {
    var effects: [SessionAction]
    /// The bookkeeping after the step, when done under the same lock.
    var finish: InputFinish?
}

/// What comes after an applied input.
struct InputFinish {
    var next: HandleInput?
    /// Whether the next step reads the user for an observation model.
    var readsUser: Bool
    var idle: [CheckedContinuation<Void, Never>]
    var handsOff: Bool
}
