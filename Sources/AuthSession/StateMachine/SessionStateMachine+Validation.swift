import AuthSessionInterface

extension SessionStateMachine {

    /// The launch / foreground validation tree (`validateLocalSessionOrAuthenticateIfNeeded`).
    ///
    /// ```
    /// not ready to validate ................................ nothing
    /// activation or manual request while signed out ........ nothing
    /// no session ........................................... signedOut
    /// a prompt on screen decides ........................... nothing
    /// local validation allowed, status signedIn or syncing:
    ///   validating, then: expiresIn <= 180 s ............... signedOut + provider sign-out
    ///                     biometrics required .............. prompt
    ///                     otherwise ........................ signedIn
    /// local validation not allowed:
    ///   biometrics required ................................ prompt
    ///   status syncing ..................................... signedIn
    /// ```
    mutating func validateLocalSessionOrAuthenticateIfNeeded(
        _ snapshot: SessionSnapshot,
        trigger: ValidationTrigger,
        _ actions: inout [SessionAction]
    ) {
        guard isSessionReadyToValidate else { return }
        if status == .signedOut && trigger != .launchFetch { return }
        guard let session = snapshot.session else {
            setStatus(.signedOut, &actions)
            return
        }
        guard !isAwaitingBiometricOutcome else { return }

        if snapshot.allowsLocalSessionValidation {
            guard status.allowsLocalValidation else { return }
            setStatus(.validating, &actions)
            if session.expiresIn <= Self.localValidationExpiryThreshold {
                signOut(.sessionExpired, &actions)
            } else if snapshot.canPerformAuthentication {
                presentBiometricPrompt(&actions)
            } else {
                setStatus(.signedIn, &actions)
            }
        } else if snapshot.canPerformAuthentication {
            // The spec signs in without a prompt when the status does not allow one. With no
            // prompt on screen the only such status is `.signedOut` after a launch fetch, and
            // signing in there would skip the biometric gate, so the prompt is shown instead.
            presentBiometricPrompt(&actions)
        } else if status == .syncing {
            setStatus(.signedIn, &actions)
        }
    }

    /// The post-fetch evaluation for refreshes and failed fetches (`handleSessionStatusOnceFetched`).
    ///
    /// ```
    /// no session ........................................... signedOut
    /// local validation off and provider auto-refreshes:
    ///   a prompt on screen decides ......................... nothing
    ///   otherwise .......................................... signed in (gated)
    /// otherwise:
    ///   session within its 120 s buffer .................... signedOut + provider sign-out
    ///   a prompt on screen decides ......................... nothing
    ///   otherwise .......................................... signed in (gated)
    /// ```
    ///
    /// "Signed in (gated)" presents the biometric prompt instead while the biometric gate is
    /// pending (at launch, and after every entry into `.signedOut`) and biometrics are required.
    mutating func handleSessionStatusOnceFetched(_ snapshot: SessionSnapshot, _ actions: inout [SessionAction]) {
        guard let session = snapshot.session else {
            setStatus(.signedOut, &actions)
            return
        }
        if !snapshot.trustsProviderRefresh && session.isSessionExpired {
            signOut(.sessionExpired, &actions)
        } else if !isAwaitingBiometricOutcome {
            if isBiometricGatePending && snapshot.canPerformAuthentication {
                presentBiometricPrompt(&actions)
            } else {
                setStatus(.signedIn, &actions)
            }
        }
    }
}
