import AuthSessionInterface
import Foundation
import Testing

@testable import AuthSession

@Suite("SessionStateMachine: initial state and provider events")
struct SessionStateMachineEventTests {

    @Test("a new machine is syncing, not ready, not armed, no prompt, no manual authentication")
    func initialState() {
        let machine = SessionStateMachine()
        #expect(machine.status == .syncing)
        #expect(!machine.isSessionReadyToValidate)
        #expect(!machine.allowsSessionValidationFromNotifications)
        #expect(!machine.isManualAuthenticationRequired)
        #expect(!machine.isBiometricAuthenticationInProcess)
        #expect(machine.isLaunchValidationPending)
    }

    @Test(
        "fetchingSession moves every resting status to syncing",
        arguments: [AuthSessionStatus.signedIn, .signedOut, .biometricAuthentication]
    )
    func fetchingSessionSyncs(from status: AuthSessionStatus) {
        var machine = MachineFixture.ready(in: status)
        #expect(machine.fetchingSession().summaries == ["status(\(status)→syncing)"])
        #expect(machine.status == .syncing)
    }

    @Test("fetchingSession while syncing changes nothing")
    func fetchingSessionWhileSyncingIsNoOp() {
        var machine = SessionStateMachine()
        #expect(machine.fetchingSession().isEmpty)
    }

    @Test("fetchingSession during a prompt keeps the prompt on screen, and its success then signs in")
    func fetchingSessionKeepsPrompt() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let id = machine.biometricPrompt!.id
        _ = machine.fetchingSession()
        #expect(machine.isBiometricAuthenticationInProcess)
        let actions = machine.biometricPromptCompleted(
            id,
            result: .success(()),
            snapshot: snapshot(),
            allowsSigningOut: true
        )
        #expect(actions.summaries == ["status(syncing→signedIn)"])
    }

    @Test("sessionFetched and sessionFetchFailed make the machine ready to validate")
    func fetchResultsMakeReady() {
        var fetched = SessionStateMachine()
        _ = fetched.sessionFetched(isInitialFetch: false, snapshot: snapshot())
        #expect(fetched.isSessionReadyToValidate)

        var failed = SessionStateMachine()
        _ = failed.sessionFetchFailed(URLError(.notConnectedToInternet), snapshot: snapshot())
        #expect(failed.isSessionReadyToValidate)
    }

    @Test("neither fetch result arms validation from activations")
    func fetchResultsDoNotArm() {
        var fetched = SessionStateMachine()
        _ = fetched.sessionFetched(isInitialFetch: true, snapshot: snapshot())
        #expect(!fetched.allowsSessionValidationFromNotifications)

        var failed = SessionStateMachine()
        _ = failed.sessionFetchFailed(URLError(.timedOut), snapshot: snapshot())
        #expect(!failed.allowsSessionValidationFromNotifications)
    }

    @Test("the launch fetch validates, passing through validating, then reports the fetch")
    func launchFetchValidates() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot())
        #expect(actions.summaries == ["status(syncing→validating)", "status(validating→signedIn)", "fetched(initial)"])
        #expect(!machine.isLaunchValidationPending)
    }

    @Test("a refresh runs the post-fetch evaluation: no validating step")
    func refreshEvaluates() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot())
        #expect(actions.summaries == ["status(syncing→signedIn)", "fetched(refresh)"])
    }

    @Test("a second launch fetch is evaluated like a refresh, so it cannot prompt twice")
    func duplicateLaunchFetchIsARefresh() {
        var machine = SessionStateMachine()
        _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(biometric: true))
        let id = machine.biometricPrompt!.id
        _ = machine.biometricPromptCompleted(id, result: .success(()), snapshot: snapshot(), allowsSigningOut: true)
        let actions = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(biometric: true))
        #expect(actions.summaries == ["fetched(initial)"])
        #expect(!machine.isBiometricAuthenticationInProcess)
    }

    @Test("a fetch failure keeps a valid session and reports the failure")
    func fetchFailureKeepsValidSession() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetchFailed(URLError(.notConnectedToInternet), snapshot: snapshot())
        #expect(actions.summaries == ["status(syncing→signedIn)", "failure(sessionFetchFailed)"])
    }

    @Test("a fetch failure with no session signs out and reports the failure")
    func fetchFailureWithoutSessionSignsOut() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetchFailed(URLError(.notConnectedToInternet), snapshot: snapshot(expiresIn: nil))
        #expect(actions.summaries == ["status(syncing→signedOut)", "failure(sessionFetchFailed)"])
    }

    @Test(
        "sessionSignIn signs in from every resting status and reports the login",
        arguments: [AuthSessionStatus.syncing, .signedOut, .biometricAuthentication]
    )
    func signInSignsIn(from status: AuthSessionStatus) {
        var machine = MachineFixture.ready(in: status)
        // A prompt up for the session before is taken down: it no longer gates anything.
        let cancel = status == .biometricAuthentication ? ["cancelPrompt(#1)"] : []
        #expect(machine.sessionSignIn().summaries == ["status(\(status)→signedIn)"] + cancel + ["login"])
    }

    @Test("sessionSignIn while signed in reports the login without a status change")
    func signInWhileSignedIn() {
        var machine = MachineFixture.ready(in: .signedIn)
        #expect(machine.sessionSignIn().summaries == ["login"])
    }

    @Test(
        "sessionSignedOut signs out and reports one logout, even when already signed out",
        arguments: AuthSessionStatus.allCases.filter { $0 != .validating }
    )
    func signedOutSignsOut(from status: AuthSessionStatus) {
        var machine = MachineFixture.ready(in: status)
        let cancel = status == .biometricAuthentication ? ["cancelPrompt(#1)"] : []
        let expected =
            status == .signedOut ? ["logout(nil)"] : ["status(\(status)→signedOut)"] + cancel + ["logout(nil)"]
        #expect(machine.sessionSignedOut(error: nil).summaries == expected)
        #expect(
            machine.sessionSignedOut(error: AuthSessionError.sessionExpired).summaries == ["logout(AuthSessionError)"]
        )
    }

    @Test(
        "sessionUpdated and unexpectedError notify without a status change",
        arguments: AuthSessionStatus.allCases.filter { $0 != .validating }
    )
    func updatesAndErrorsDoNotMoveStatus(in status: AuthSessionStatus) {
        let machine = MachineFixture.ready(in: status)
        #expect(machine.sessionUpdated(nil).summaries == ["userUpdate"])
        #expect(machine.unexpectedError(.sessionMalformed).summaries == ["failure(sessionMalformed)"])
        #expect(machine.status == status)
    }

    @Test("a sign-out the provider could not perform is reported; the status stays signed out")
    func signOutFailureIsReported() {
        var machine = SessionStateMachine()
        _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(expiresIn: 30))
        #expect(machine.status == .signedOut)
        #expect(machine.signOutFailed(URLError(.timedOut)).summaries == ["failure(signingOutFailure)"])
        #expect(machine.status == .signedOut)
    }
}

@Suite("SessionStateMachine: local validation tree")
struct SessionStateMachineValidationTests {

    @Test("an activation before the first fetch result changes nothing")
    func notReadyDoesNothing() {
        var machine = SessionStateMachine()
        _ = machine.applicationDidBecomeActive(snapshot: snapshot())
        #expect(machine.applicationDidBecomeActive(snapshot: snapshot(expiresIn: nil)).isEmpty)
        #expect(machine.status == .syncing)
    }

    @Test("no session at launch signs out")
    func launchWithoutSessionSignsOut() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(expiresIn: nil))
        #expect(actions.summaries == ["status(syncing→signedOut)", "fetched(initial)"])
    }

    @Test("a foreground validation with no session signs out")
    func activationWithoutSessionSignsOut() {
        var machine = MachineFixture.armed(in: .signedIn)
        let actions = machine.applicationDidBecomeActive(snapshot: snapshot(expiresIn: nil))
        #expect(actions.summaries == ["status(signedIn→signedOut)"])
    }

    @Test(
        "local validation signs out at or under 180 s and keeps the session above",
        arguments: [
            (180.0, true), (179.999, true), (120, true), (0, true), (180.001, false), (181, false), (3600, false),
        ]
    )
    func expiryThreshold(expiresIn: TimeInterval, signsOut: Bool) {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(expiresIn: expiresIn))
        let expected =
            signsOut
            ? [
                "status(syncing→validating)", "status(validating→signedOut)", "signOut(sessionExpired)",
                "fetched(initial)",
            ]
            : ["status(syncing→validating)", "status(validating→signedIn)", "fetched(initial)"]
        #expect(actions.summaries == expected)
    }

    @Test("a valid session with biometrics required presents one prompt")
    func validSessionWithBiometricsPrompts() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(biometric: true))
        #expect(
            actions.summaries == [
                "status(syncing→validating)", "status(validating→biometricAuthentication)", "prompt(#1)",
                "fetched(initial)",
            ]
        )
        #expect(machine.isBiometricAuthenticationInProcess)
    }

    @Test("expiry wins over biometrics: an expiring session is signed out without a prompt")
    func expiryBeatsBiometrics() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(expiresIn: 100, biometric: true))
        #expect(actions.summaries.contains("signOut(sessionExpired)"))
        #expect(!actions.summaries.contains("prompt(#1)"))
    }

    @Test("local validation only starts from signed in or syncing")
    func localValidationNeedsAllowingStatus() {
        for status in AuthSessionStatus.allCases {
            #expect(status.allowsLocalValidation == (status == .signedIn || status == .syncing))
            #expect(
                status.allowsBiometricAuthentication
                    == (status == .signedIn || status == .syncing || status == .validating)
            )
        }
        var machine = MachineFixture.armed(in: .signedIn)
        let actions = machine.applicationDidBecomeActive(snapshot: snapshot())
        #expect(actions.summaries == ["status(signedIn→validating)", "status(validating→signedIn)"])
    }

    @Test("without local validation, biometrics required: a prompt, never an expiry check")
    func noLocalValidationWithBiometrics() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(
            isInitialFetch: true,
            snapshot: snapshot(expiresIn: 30, localValidation: false, biometric: true)
        )
        #expect(actions.summaries == ["status(syncing→biometricAuthentication)", "prompt(#1)", "fetched(initial)"])
    }

    @Test("without local validation or biometrics, syncing signs in")
    func noLocalValidationSyncingSignsIn() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(
            isInitialFetch: true,
            snapshot: snapshot(expiresIn: 30, localValidation: false)
        )
        #expect(actions.summaries == ["status(syncing→signedIn)", "fetched(initial)"])
    }

    @Test("without local validation or biometrics, signed in stays signed in")
    func noLocalValidationSignedInStays() {
        var machine = MachineFixture.armed(in: .signedIn)
        #expect(machine.applicationDidBecomeActive(snapshot: snapshot(expiresIn: 30, localValidation: false)).isEmpty)
        #expect(machine.status == .signedIn)
    }

    @Test("a launch fetch while signed out with biometrics required prompts rather than signing in unlocked")
    func launchFetchFromSignedOutPrompts() {
        var machine = SessionStateMachine()
        _ = machine.sessionSignedOut(error: nil)
        let actions = machine.sessionFetched(
            isInitialFetch: true,
            snapshot: snapshot(localValidation: false, biometric: true)
        )
        #expect(actions.summaries == ["status(signedOut→biometricAuthentication)", "prompt(#1)", "fetched(initial)"])
    }

    @Test("a launch fetch while signed out with local validation stays signed out (status does not allow it)")
    func launchFetchFromSignedOutWithLocalValidation() {
        var machine = SessionStateMachine()
        _ = machine.sessionSignedOut(error: nil)
        let actions = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot())
        #expect(actions.summaries == ["fetched(initial)"])
        #expect(machine.status == .signedOut)
    }
}

@Suite("SessionStateMachine: post-fetch evaluation")
struct SessionStateMachinePostFetchTests {

    struct Case: Sendable, CustomTestStringConvertible {
        let expiresIn: TimeInterval?
        let localValidation: Bool
        let autoRefresh: Bool
        let expected: [String]

        var testDescription: String {
            "session \(expiresIn.map { "\($0) s" } ?? "none"), local \(localValidation), autoRefresh \(autoRefresh)"
        }
    }

    static let cases: [Case] = {
        var cases: [Case] = []
        for local in [true, false] {
            for autoRefresh in [true, false] {
                cases.append(
                    Case(
                        expiresIn: nil,
                        localValidation: local,
                        autoRefresh: autoRefresh,
                        expected: ["status(syncing→signedOut)"]
                    )
                )
                let trustsProvider = !local && autoRefresh
                for expiresIn in [119.999, 120, 3600] as [TimeInterval] {
                    let expired = expiresIn < 120 && !trustsProvider
                    cases.append(
                        Case(
                            expiresIn: expiresIn,
                            localValidation: local,
                            autoRefresh: autoRefresh,
                            expected: expired
                                ? ["status(syncing→signedOut)", "signOut(sessionExpired)"]
                                : ["status(syncing→signedIn)"]
                        )
                    )
                }
            }
        }
        return cases
    }()

    @Test("local validation × auto-refresh × expiry (120 s buffer)", arguments: cases)
    func matrix(_ testCase: Case) {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(
            isInitialFetch: false,
            snapshot: snapshot(
                expiresIn: testCase.expiresIn,
                localValidation: testCase.localValidation,
                autoRefresh: testCase.autoRefresh
            )
        )
        #expect(actions.summaries == testCase.expected + ["fetched(refresh)"])
    }

    @Test("a refresh during a prompt leaves the prompt in charge of the status")
    func refreshDuringPromptDoesNothing() {
        for (local, autoRefresh) in [(true, false), (false, true)] {
            var machine = MachineFixture.ready(in: .biometricAuthentication)
            let actions = machine.sessionFetched(
                isInitialFetch: false,
                snapshot: snapshot(localValidation: local, autoRefresh: autoRefresh, biometric: true)
            )
            #expect(actions.summaries == ["fetched(refresh)"])
            #expect(machine.status == .biometricAuthentication)
        }
    }

    @Test("an expired session is signed out even while a prompt is up, and the prompt stops mattering")
    func expiryDuringPromptSignsOut() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let id = machine.biometricPrompt!.id
        let actions = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(expiresIn: 10))
        #expect(
            actions.summaries == [
                "status(biometricAuthentication→signedOut)", "cancelPrompt(#1)", "signOut(sessionExpired)",
                "fetched(refresh)",
            ]
        )
        #expect(
            machine.biometricPromptCompleted(id, result: .success(()), snapshot: snapshot(), allowsSigningOut: true)
                .isEmpty
        )
        #expect(machine.status == .signedOut)
    }

    @Test("the launch gate: a failed launch fetch with biometrics required prompts instead of signing in")
    func failedLaunchFetchStillPrompts() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetchFailed(URLError(.notConnectedToInternet), snapshot: snapshot(biometric: true))
        #expect(
            actions.summaries == [
                "status(syncing→biometricAuthentication)", "prompt(#1)", "failure(sessionFetchFailed)",
            ]
        )
    }

    @Test("the launch gate: a refresh before the launch fetch with biometrics required prompts")
    func refreshBeforeLaunchFetchPrompts() {
        var machine = SessionStateMachine()
        let actions = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
        #expect(actions.summaries == ["status(syncing→biometricAuthentication)", "prompt(#1)", "fetched(refresh)"])
        #expect(!machine.isLaunchValidationPending && !machine.isBiometricGatePending)
    }

    @Test("after the launch validation, refreshes never prompt")
    func refreshAfterLaunchNeverPrompts() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        _ = machine.biometricPromptCompleted(
            machine.biometricPrompt!.id,
            result: .success(()),
            snapshot: snapshot(),
            allowsSigningOut: true
        )
        _ = machine.fetchingSession()
        let actions = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
        #expect(actions.summaries == ["status(syncing→signedIn)", "fetched(refresh)"])
    }

    @Test("a sign-in settles the launch gate")
    func signInSettlesLaunchGate() {
        var machine = SessionStateMachine()
        _ = machine.sessionSignIn()
        #expect(!machine.isLaunchValidationPending)
        _ = machine.fetchingSession()
        #expect(
            machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true)).summaries == [
                "status(syncing→signedIn)", "fetched(refresh)",
            ]
        )
    }
}

@Suite("SessionStateMachine: biometric prompts")
struct SessionStateMachineBiometricTests {

    @Test("success signs in")
    func successSignsIn() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let actions = machine.biometricPromptCompleted(
            machine.biometricPrompt!.id,
            result: .success(()),
            snapshot: snapshot(),
            allowsSigningOut: true
        )
        #expect(actions.summaries == ["status(biometricAuthentication→signedIn)"])
        #expect(!machine.isBiometricAuthenticationInProcess)
    }

    @Test(
        "a failure the provider signs out on: signed out at once, then the provider is asked",
        arguments: BiometricAuthenticationError.allCases
    )
    func failureSignsOut(error: BiometricAuthenticationError) {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let actions = machine.biometricPromptCompleted(
            machine.biometricPrompt!.id,
            result: .failure(error),
            snapshot: snapshot(),
            allowsSigningOut: true
        )
        #expect(actions.summaries == ["status(biometricAuthentication→signedOut)", "signOut(biometric.\(error))"])
        #expect(!machine.isManualAuthenticationRequired)
    }

    @Test(
        "a failure the provider keeps the session on: signed in, manual authentication required, failure reported",
        arguments: BiometricAuthenticationError.allCases
    )
    func failureKeepsSession(error: BiometricAuthenticationError) {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let actions = machine.biometricPromptCompleted(
            machine.biometricPrompt!.id,
            result: .failure(error),
            snapshot: snapshot(),
            allowsSigningOut: false
        )
        #expect(actions.summaries == ["status(biometricAuthentication→signedIn)", "failure(biometricAuthFailure)"])
        #expect(machine.isManualAuthenticationRequired)
    }

    @Test("an outcome for an unknown prompt changes nothing")
    func unknownPromptIsIgnored() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let stranger = BiometricPromptID(rawValue: 99)
        #expect(
            machine.biometricPromptCompleted(
                stranger,
                result: .success(()),
                snapshot: snapshot(),
                allowsSigningOut: true
            ).isEmpty
        )
        #expect(machine.isBiometricAuthenticationInProcess)
        #expect(machine.status == .biometricAuthentication)
    }

    @Test("a late success after a sign-out never resurrects signedIn")
    func lateSuccessAfterSignOut() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let id = machine.biometricPrompt!.id
        _ = machine.sessionSignedOut(error: nil)
        #expect(machine.isBiometricAuthenticationInProcess, "the system prompt is still on screen")
        #expect(
            machine.biometricPromptCompleted(id, result: .success(()), snapshot: snapshot(), allowsSigningOut: true)
                .isEmpty
        )
        #expect(machine.status == .signedOut)
        #expect(!machine.isBiometricAuthenticationInProcess)
    }

    @Test("a late failure after an interactive sign-in does not sign the user out")
    func lateFailureAfterSignIn() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let id = machine.biometricPrompt!.id
        _ = machine.sessionSignIn()
        #expect(
            machine.biometricPromptCompleted(
                id,
                result: .failure(.failed),
                snapshot: snapshot(),
                allowsSigningOut: true
            ).isEmpty
        )
        #expect(machine.status == .signedIn)
    }

    @Test("no second prompt while one is on screen, whatever triggers it")
    func onePromptAtATime() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        _ = machine.sessionSignIn()  // the prompt stops mattering but is still on screen
        _ = machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true))
        let activation = machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true))
        #expect(activation.isEmpty)
        _ = machine.fetchingSession()
        let refresh = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
        #expect(!refresh.summaries.contains { $0.hasPrefix("prompt") })
    }

    @Test("prompt ids increase, so an old outcome cannot end a new prompt")
    func promptIDsIncrease() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let first = machine.biometricPrompt!.id
        _ = machine.biometricPromptCompleted(
            first,
            result: .failure(.canceledByUser),
            snapshot: snapshot(),
            allowsSigningOut: false
        )
        let second = machine.requestManualAuthentication(snapshot: snapshot(biometric: true))
        #expect(
            second.summaries == [
                "status(signedIn→validating)", "status(validating→biometricAuthentication)", "prompt(#2)",
            ]
        )
        #expect(
            machine.biometricPromptCompleted(first, result: .success(()), snapshot: snapshot(), allowsSigningOut: true)
                .isEmpty
        )
        #expect(machine.status == .biometricAuthentication)
    }
}

@Suite("SessionStateMachine: activations and manual authentication")
struct SessionStateMachineActivationTests {

    @Test("the first activation only arms validation; the second validates")
    func firstActivationDefers() {
        var machine = MachineFixture.ready(in: .signedIn)
        #expect(machine.applicationDidBecomeActive(snapshot: snapshot(expiresIn: 30)).isEmpty)
        #expect(machine.allowsSessionValidationFromNotifications)
        let actions = machine.applicationDidBecomeActive(snapshot: snapshot(expiresIn: 30))
        #expect(
            actions.summaries == [
                "status(signedIn→validating)", "status(validating→signedOut)", "signOut(sessionExpired)",
            ]
        )
    }

    @Test("an activation before any fetch arms validation without changing the status")
    func activationBeforeFetch() {
        var machine = SessionStateMachine()
        #expect(machine.applicationDidBecomeActive(snapshot: snapshot()).isEmpty)
        #expect(machine.allowsSessionValidationFromNotifications)
        #expect(machine.applicationDidBecomeActive(snapshot: snapshot()).isEmpty)
        #expect(machine.status == .syncing)
    }

    @Test("a prompt disarms validation; activations while it is up keep it disarmed; the next one re-arms")
    func promptSuppressesActivations() {
        var machine = MachineFixture.armed(in: .signedIn)
        let prompt = machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true))
        #expect(prompt.summaries.last == "prompt(#1)")
        #expect(!machine.allowsSessionValidationFromNotifications)

        #expect(machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true)).isEmpty)
        #expect(!machine.allowsSessionValidationFromNotifications)

        _ = machine.biometricPromptCompleted(
            machine.biometricPrompt!.id,
            result: .success(()),
            snapshot: snapshot(),
            allowsSigningOut: true
        )
        #expect(!machine.allowsSessionValidationFromNotifications, "a prompt ending does not re-arm")
        #expect(
            machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true)).isEmpty,
            "the prompt's own re-activation"
        )
        #expect(machine.allowsSessionValidationFromNotifications)
        #expect(machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true)).summaries.last == "prompt(#2)")
    }

    @Test("an activation never leaves signedOut, even with a valid session")
    func activationNeverLeavesSignedOut() {
        var machine = MachineFixture.armed(in: .signedOut)
        for biometric in [false, true] {
            for local in [false, true] {
                #expect(
                    machine.applicationDidBecomeActive(snapshot: snapshot(localValidation: local, biometric: biometric))
                        .isEmpty
                )
            }
        }
        #expect(machine.status == .signedOut)
    }

    @Test("manual authentication required: activations do not validate")
    func manualAuthenticationPausesActivations() {
        var machine = MachineFixture.manualAuthenticationRequired()
        _ = machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true))
        #expect(machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true)).isEmpty)
        #expect(machine.isManualAuthenticationRequired)
    }

    @Test("requestManualAuthentication does nothing unless required")
    func manualRequestIsNoOpWhenNotRequired() {
        var machine = MachineFixture.ready(in: .signedIn)
        #expect(machine.requestManualAuthentication(snapshot: snapshot(biometric: true)).isEmpty)
        #expect(machine.status == .signedIn)
    }

    @Test("requestManualAuthentication clears the flag and runs the full validation")
    func manualRequestValidates() {
        var machine = MachineFixture.manualAuthenticationRequired()
        let prompt = machine.requestManualAuthentication(snapshot: snapshot(biometric: true))
        #expect(
            prompt.summaries == [
                "status(signedIn→validating)", "status(validating→biometricAuthentication)", "prompt(#2)",
            ]
        )
        #expect(!machine.isManualAuthenticationRequired)

        var expiring = MachineFixture.manualAuthenticationRequired()
        let signOut = expiring.requestManualAuthentication(snapshot: snapshot(expiresIn: 60, biometric: true))
        #expect(
            signOut.summaries == [
                "status(signedIn→validating)", "status(validating→signedOut)", "signOut(sessionExpired)",
            ]
        )
    }

    @Test("the manual flag clears on leaving validating, entering signedOut, a signed-out event, a sign-in, a prompt")
    func manualFlagLifetime() {
        var leavingValidating = MachineFixture.manualAuthenticationRequired()
        _ = leavingValidating.requestManualAuthentication(snapshot: snapshot())
        #expect(!leavingValidating.isManualAuthenticationRequired)

        var signedOutByExpiry = MachineFixture.manualAuthenticationRequired()
        _ = signedOutByExpiry.sessionFetched(isInitialFetch: false, snapshot: snapshot(expiresIn: 10))
        #expect(signedOutByExpiry.status == .signedOut)
        #expect(!signedOutByExpiry.isManualAuthenticationRequired)

        var signedOutEvent = MachineFixture.manualAuthenticationRequired()
        _ = signedOutEvent.sessionSignedOut(error: nil)
        #expect(!signedOutEvent.isManualAuthenticationRequired)

        var signIn = MachineFixture.manualAuthenticationRequired()
        _ = signIn.sessionSignIn()
        #expect(!signIn.isManualAuthenticationRequired)

        var prompt = MachineFixture.manualAuthenticationRequired()
        _ = prompt.requestManualAuthentication(snapshot: snapshot(biometric: true))
        #expect(prompt.isBiometricAuthenticationInProcess)
        #expect(!prompt.isManualAuthenticationRequired)
    }

    @Test("the manual flag survives refreshes and syncing")
    func manualFlagSurvivesRefresh() {
        var machine = MachineFixture.manualAuthenticationRequired()
        _ = machine.fetchingSession()
        _ = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
        #expect(machine.status == .signedIn)
        #expect(machine.isManualAuthenticationRequired)
    }
}

@Suite("SessionStateMachine: the biometric gate and abandoned prompts")
struct SessionStateMachineGateTests {

    @Test("after the handle signs out on a biometric failure, a refresh with the kept session prompts again")
    func gateReArmsAfterSignOut() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        _ = machine.biometricPromptCompleted(
            machine.biometricPrompt!.id,
            result: .failure(.failed),
            snapshot: snapshot(biometric: true),
            allowsSigningOut: true
        )
        #expect(machine.isBiometricGatePending)
        // The provider failed to drop its session; a refresh arrives.
        let refresh = machine.sessionFetchFailed(URLError(.timedOut), snapshot: snapshot(biometric: true))
        #expect(
            refresh.summaries == [
                "status(signedOut→biometricAuthentication)", "prompt(#2)", "failure(sessionFetchFailed)",
            ]
        )
    }

    @Test("any entry into signedOut re-arms the gate; a sign-in settles it")
    func gateLifetime() {
        var machine = MachineFixture.ready(in: .signedIn)
        #expect(!machine.isBiometricGatePending)
        _ = machine.sessionSignedOut(error: nil)
        #expect(machine.isBiometricGatePending)
        _ = machine.sessionSignIn()
        #expect(!machine.isBiometricGatePending)
    }

    @Test("an abandoned prompt does not block the decision trees: a refresh signs in")
    func abandonedPromptDoesNotBlock() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        _ = machine.sessionSignedOut(error: nil)
        _ = machine.fetchingSession()
        let refresh = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot())
        #expect(refresh.summaries == ["status(syncing→signedIn)", "fetched(refresh)"])
        #expect(machine.isBiometricAuthenticationInProcess, "the old prompt is still being taken down")
        #expect(!machine.isAwaitingBiometricOutcome)
    }

    @Test("an abandoned prompt is never reused: a new one goes up once it is gone, and its success counts for nothing")
    func abandonedPromptIsNotReused() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let abandoned = machine.biometricPrompt!.id
        #expect(machine.sessionSignedOut(error: nil).summaries.contains("cancelPrompt(#1)"))
        _ = machine.fetchingSession()
        let refresh = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
        // The gate holds, but the abandoned prompt is still being taken down: the new one waits.
        #expect(refresh.summaries == ["status(syncing→biometricAuthentication)", "fetched(refresh)"])
        #expect(machine.isAwaitingBiometricOutcome && machine.isPromptDeferred)

        // The abandoned prompt reports success (the user answered it just before the sign-out).
        let outcome = machine.biometricPromptCompleted(
            abandoned,
            result: .success(()),
            snapshot: snapshot(biometric: true),
            allowsSigningOut: true
        )
        #expect(outcome.summaries == ["prompt(#2)"], "the success is ignored; the waiting prompt goes up")
        #expect(machine.status == .biometricAuthentication)
        let second = machine.biometricPrompt!.id
        #expect(second != abandoned)

        let unlocked = machine.biometricPromptCompleted(
            second,
            result: .success(()),
            snapshot: snapshot(biometric: true),
            allowsSigningOut: true
        )
        #expect(unlocked.summaries == ["status(biometricAuthentication→signedIn)"])
    }

    @Test("a sign-out drops a prompt that was waiting for an abandoned one")
    func signOutDropsDeferredPrompt() {
        var machine = MachineFixture.ready(in: .biometricAuthentication)
        let abandoned = machine.biometricPrompt!.id
        _ = machine.sessionSignedOut(error: nil)
        _ = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
        #expect(machine.isPromptDeferred)
        _ = machine.sessionSignedOut(error: nil)
        #expect(!machine.isPromptDeferred)
        let outcome = machine.biometricPromptCompleted(
            abandoned,
            result: .success(()),
            snapshot: snapshot(biometric: true),
            allowsSigningOut: true
        )
        #expect(outcome.isEmpty)
        #expect(machine.status == .signedOut && !machine.isBiometricAuthenticationInProcess)
    }

    @Test(
        "the gate holds until signed in or prompted: a launch fetch that validated nothing does not open it",
        arguments: [true, false]
    )
    func gateOpensOnlyOnSignInOrPrompt(localValidation: Bool) {
        var machine = SessionStateMachine()
        _ = machine.sessionSignedOut(error: nil)
        // The launch fetch arrives while signed out: with local validation it validates nothing.
        _ = machine.sessionFetched(
            isInitialFetch: true,
            snapshot: snapshot(localValidation: localValidation, biometric: true)
        )
        if localValidation {
            #expect(machine.status == .signedOut)
            #expect(machine.isBiometricGatePending)
            let refresh = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
            #expect(
                refresh.summaries == ["status(signedOut→biometricAuthentication)", "prompt(#1)", "fetched(refresh)"]
            )
        } else {
            #expect(machine.status == .biometricAuthentication, "without local validation the launch prompts")
        }
    }

    @Test("a decision taken while biometrics were off opens the gate; enabling them later does not prompt a refresh")
    func gateOpensWhenSignedInWithoutBiometrics() {
        var machine = SessionStateMachine()
        _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot())
        #expect(machine.status == .signedIn && !machine.isBiometricGatePending)
        _ = machine.fetchingSession()
        let refresh = machine.sessionFetched(isInitialFetch: false, snapshot: snapshot(biometric: true))
        #expect(refresh.summaries == ["status(syncing→signedIn)", "fetched(refresh)"])
    }

    @Test("without an app lifecycle the launch counts as the first activation, and a finished prompt re-arms")
    func noLifecycleArmsAtLaunchAndAfterPrompts() {
        var machine = SessionStateMachine(hasApplicationLifecycle: false)
        #expect(machine.allowsSessionValidationFromNotifications)
        _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(biometric: true))
        #expect(machine.status == .biometricAuthentication && !machine.allowsSessionValidationFromNotifications)
        _ = machine.biometricPromptCompleted(
            machine.biometricPrompt!.id,
            result: .success(()),
            snapshot: snapshot(biometric: true),
            allowsSigningOut: true
        )
        #expect(machine.status == .signedIn && machine.allowsSessionValidationFromNotifications)
        // The next activation revalidates (and prompts again).
        let activation = machine.applicationDidBecomeActive(snapshot: snapshot(biometric: true))
        #expect(activation.summaries.contains("prompt(#2)"))

        var withLifecycle = SessionStateMachine()
        #expect(!withLifecycle.allowsSessionValidationFromNotifications)
        _ = withLifecycle.sessionFetched(isInitialFetch: true, snapshot: snapshot())
        #expect(withLifecycle.applicationDidBecomeActive(snapshot: snapshot()).isEmpty, "the first one only arms")
    }

    @Test("a success re-evaluates the session: gone, expired, or trusted to the provider's refresh")
    func successReEvaluates() {
        var gone = MachineFixture.ready(in: .biometricAuthentication)
        let goneActions = gone.biometricPromptCompleted(
            gone.biometricPrompt!.id,
            result: .success(()),
            snapshot: snapshot(expiresIn: nil),
            allowsSigningOut: true
        )
        #expect(goneActions.summaries == ["status(biometricAuthentication→signedOut)"])

        var expired = MachineFixture.ready(in: .biometricAuthentication)
        let expiredActions = expired.biometricPromptCompleted(
            expired.biometricPrompt!.id,
            result: .success(()),
            snapshot: snapshot(expiresIn: 100),
            allowsSigningOut: true
        )
        #expect(expiredActions.summaries == ["status(biometricAuthentication→signedOut)", "signOut(sessionExpired)"])

        var trusted = MachineFixture.ready(in: .biometricAuthentication)
        let trustedActions = trusted.biometricPromptCompleted(
            trusted.biometricPrompt!.id,
            result: .success(()),
            snapshot: snapshot(expiresIn: 100, localValidation: false, autoRefresh: true),
            allowsSigningOut: true
        )
        #expect(trustedActions.summaries == ["status(biometricAuthentication→signedIn)"])
    }
}
