import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

@Suite("Event Handling")
struct EventHandlingTests {

    @Test("fetchingSession moves to syncing")
    func fetchingSession() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        harness.provider.publish(.fetchingSession)
        #expect(harness.handle.sessionStatus == .syncing)
        #expect(
            await harness.events() == [
                "statusChanged(syncing → signedIn)", "login", "statusChanged(signedIn → syncing)",
            ]
        )
    }

    @Test("sessionFetched (launch) validates and reports the fetch with its session")
    func sessionFetchedInitial() async {
        let harness = Harness()
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(
            await harness.events() == [
                "statusChanged(syncing → validating)", "statusChanged(validating → signedIn)", "sessionFetch(initial)",
            ]
        )
        let fetchRecord = harness.recorder.records.last
        #expect((fetchRecord?.session as? MockSession) == harness.provider.session)
        #expect(fetchRecord?.hadHandle == true)
    }

    @Test("sessionFetched (refresh) evaluates and reports the fetch")
    func sessionFetchedRefresh() async {
        let harness = Harness()
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(await harness.events() == ["statusChanged(syncing → signedIn)", "sessionFetch(refresh)"])
    }

    @Test("sessionFetchFailed keeps a valid session and reports sessionFetchFailed with the cause")
    func sessionFetchFailed() async {
        let harness = Harness()
        harness.provider.publish(.sessionFetchFailed(URLError(.notConnectedToInternet)))
        #expect(harness.handle.sessionStatus == .signedIn)
        _ = await harness.events()
        guard case .failure(.sessionFetchFailed(let cause)) = harness.recorder.events.last else {
            Issue.record("expected a sessionFetchFailed failure, got \(harness.recorder.events)")
            return
        }
        #expect((cause as? URLError)?.code == .notConnectedToInternet)
    }

    @Test("sessionSignIn signs in and reports the login with the user")
    func sessionSignIn() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(await harness.events() == ["statusChanged(syncing → signedIn)", "login"])
        #expect((harness.recorder.records.last?.user as? MockUser) == harness.provider.session?.user)
    }

    @Test("sessionSignedOut signs out and reports the logout with its error")
    func sessionSignedOut() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        harness.provider.publish(.sessionSignedOut(error: URLError(.userAuthenticationRequired)))
        #expect(harness.handle.sessionStatus == .signedOut)
        let events = await harness.events()
        #expect(
            events.suffix(2) == [
                "statusChanged(signedIn → signedOut)",
                "logout(URLError: \(URLError(.userAuthenticationRequired).localizedDescription))",
            ]
        )
        guard case .logout(let error) = harness.recorder.events.last else {
            Issue.record("expected a logout")
            return
        }
        #expect((error as? URLError)?.code == .userAuthenticationRequired)
    }

    @Test("a voluntary sign-out reports a logout with no error")
    func voluntarySignOut() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignedOut(error: nil))
        #expect(await harness.events() == ["statusChanged(syncing → signedOut)", "logout(nil)"])
    }

    @Test("sessionUpdated reports the updated user and session without a status change")
    func sessionUpdated() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        let updated = MockSession(expiresIn: 7200, from: harness.clock.now, user: MockUser(identifier: "renamed"))
        harness.provider.publish(.sessionUpdated(updated))
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(await harness.events() == ["statusChanged(syncing → signedIn)", "login", "userUpdate"])
        #expect((harness.recorder.records.last?.user as? MockUser)?.identifier == "renamed")
        #expect((harness.recorder.records.last?.session as? MockSession) == updated)
    }

    @Test("unexpectedError is reported without a status change")
    func unexpectedError() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        harness.provider.publish(.unexpectedError(.userUpdateFailure(error: URLError(.badServerResponse))))
        #expect(harness.handle.sessionStatus == .signedIn)
        let events = await harness.events()
        #expect(events.last?.hasPrefix("failure(AuthSessionError.userUpdateFailure") == true)
    }

    @Test("publishing is synchronous: the status reflects the event when publish returns")
    func publishIsSynchronous() {
        let harness = Harness()
        for _ in 0..<3 {
            harness.provider.publish(.sessionSignIn)
            #expect(harness.handle.sessionStatus == .signedIn)
            harness.provider.publish(.sessionSignedOut(error: nil))
            #expect(harness.handle.sessionStatus == .signedOut)
            harness.provider.publish(.fetchingSession)
            #expect(harness.handle.sessionStatus == .syncing)
        }
    }
}

@Suite("Status Transitions")
struct StatusTransitionTests {

    @Test("an event that does not change the status notifies no status change")
    func noOpTransitionIsSilent() async {
        let harness = Harness()
        harness.provider.publish(.fetchingSession)
        harness.provider.publish(.sessionSignIn)
        harness.provider.publish(.sessionSignIn)
        #expect(await harness.statusChanges() == ["syncing → signedIn"])
        #expect(await harness.events() == ["statusChanged(syncing → signedIn)", "login", "login"])
    }

    @Test("status changes arrive in order and form a chain")
    func transitionsInOrder() async {
        let harness = Harness()
        harness.launch()
        harness.provider.publish(.fetchingSession)
        harness.provider.publish(.sessionSignedOut(error: nil))
        harness.provider.publish(.sessionSignIn)
        #expect(
            await harness.statusChanges() == [
                "syncing → validating", "validating → signedIn", "signedIn → syncing", "syncing → signedOut",
                "signedOut → signedIn",
            ]
        )
    }
}

@Suite("Session Readiness")
struct SessionReadinessTests {

    @Test("validation waits for the first fetch result: an early activation cannot sign the user out")
    func earlyActivationIsIgnored() async {
        let harness = Harness(expiresIn: nil)
        harness.activation.fire()
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .syncing)
        #expect(await harness.events().isEmpty)
    }

    @Test("after a fetch result, activations validate")
    func readyAfterFetch() {
        let harness = Harness(expiresIn: 3600)
        harness.provider.publish(.sessionFetchFailed(URLError(.timedOut)))
        #expect(harness.handle.state.withLock { $0.machine.isSessionReadyToValidate })
        harness.activation.fire()
        harness.provider.session = nil
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedOut)
    }
}

@Suite("Notification Validation Readiness")
struct NotificationValidationReadinessTests {

    @Test("the first activation after launch only arms revalidation")
    func firstActivationArms() async {
        let harness = Harness()
        harness.launch()
        harness.clock.advance(by: 3600)
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.handle.state.withLock { $0.machine.allowsSessionValidationFromNotifications })
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedOut)
    }

    @Test("activations while a prompt is up never revalidate; the prompt's own re-activation only re-arms")
    func promptSuppressesActivation() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        harness.activation.fire()
        harness.activation.fire()
        #expect(harness.authenticator.promptCount == 1)
        #expect(harness.handle.state.withLock { $0.machine.allowsSessionValidationFromNotifications } == false)

        try await harness.authenticator.resolveNextPrompt(with: .success)
        try await harness.recorder.waitForStatus(.signedIn)
        harness.activation.fire()
        #expect(harness.authenticator.promptCount == 1)
        harness.activation.fire()
        try await harness.authenticator.waitForPromptCount(2)
        #expect(harness.handle.sessionStatus == .biometricAuthentication)
    }
}

@Suite("Post-Fetch Session State")
struct PostFetchSessionStateTests {

    struct Case: Sendable, CustomTestStringConvertible {
        let expiresIn: TimeInterval?
        let localValidation: Bool
        let autoRefresh: Bool

        var testDescription: String {
            "session \(expiresIn.map { "\($0) s" } ?? "none"), local \(localValidation), autoRefresh \(autoRefresh)"
        }

        var expectedStatus: AuthSessionStatus {
            guard let expiresIn else { return .signedOut }
            let trustsProvider = !localValidation && autoRefresh
            return expiresIn < 120 && !trustsProvider ? .signedOut : .signedIn
        }
    }

    static let cases: [Case] = [nil, 0, 119, 120, 3600].flatMap { (expiresIn: TimeInterval?) in
        [true, false].flatMap { local in
            [true, false].map { Case(expiresIn: expiresIn, localValidation: local, autoRefresh: $0) }
        }
    }

    @Test("a refresh: allowsLocalSessionValidation × isSessionAutoRefreshEnabled × expiry", arguments: cases)
    func refreshMatrix(_ testCase: Case) {
        let harness = Harness(
            expiresIn: testCase.expiresIn,
            localValidation: testCase.localValidation,
            autoRefresh: testCase.autoRefresh
        )
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(harness.handle.sessionStatus == testCase.expectedStatus)
        let signsOutForExpiry = testCase.expiresIn != nil && testCase.expectedStatus == .signedOut
        #expect(harness.provider.signOutCount == (signsOutForExpiry ? 1 : 0))
    }

    @Test("a failed fetch: the same matrix, and a network blip never signs out a valid session", arguments: cases)
    func failureMatrix(_ testCase: Case) {
        let harness = Harness(
            expiresIn: testCase.expiresIn,
            localValidation: testCase.localValidation,
            autoRefresh: testCase.autoRefresh
        )
        harness.provider.publish(.sessionFetchFailed(URLError(.networkConnectionLost)))
        #expect(harness.handle.sessionStatus == testCase.expectedStatus)
    }

    @Test("the 120 s buffer is measured on the injected clock")
    func bufferUsesInjectedClock() {
        let harness = Harness(expiresIn: 3600)
        harness.clock.advance(by: 3600 - 120)
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(harness.handle.sessionStatus == .signedIn, "exactly 120 s left is still valid")
        harness.provider.publish(.fetchingSession)
        harness.clock.advance(by: 0.001)
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutErrors.first.flatMap { $0 as? AuthSessionError }?.caseName == "sessionExpired")
    }
}

@Suite("Local Validation")
struct LocalValidationTests {

    @Test("no session at launch signs out")
    func noSession() {
        let harness = Harness(expiresIn: nil)
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutCount == 0)
    }

    @Test(
        "on the injected clock, 180 s or less left signs out and more keeps the session",
        arguments: [(180.0, true), (179.999, true), (180.001, false), (3600, false)]
    )
    func threshold(secondsLeft: TimeInterval, signsOut: Bool) {
        let harness = Harness(expiresIn: 7200)
        harness.clock.advance(by: 7200 - secondsLeft)
        harness.launch()
        #expect(harness.handle.sessionStatus == (signsOut ? .signedOut : .signedIn))
        #expect(harness.provider.signOutCount == (signsOut ? 1 : 0))
    }

    @Test("a valid session with biometrics goes through validating to the prompt")
    func biometricBranch() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        #expect(harness.handle.sessionStatus == .biometricAuthentication)
        #expect(await harness.statusChanges() == ["syncing → validating", "validating → biometricAuthentication"])
        try await harness.authenticator.waitForPendingPrompt()
    }

    @Test("without local validation a nearly expired session is not checked; biometrics still gate it")
    func noLocalValidation() async throws {
        let harness = Harness(expiresIn: 30, biometric: true, localValidation: false)
        harness.launch()
        #expect(harness.handle.sessionStatus == .biometricAuthentication)
        #expect(harness.provider.signOutCount == 0)

        let plain = Harness(expiresIn: 30, localValidation: false)
        plain.launch()
        #expect(plain.handle.sessionStatus == .signedIn)
    }

    @Test("foreground revalidation finds an expired session and signs out through the provider")
    func foregroundRevalidation() async {
        let harness = Harness(expiresIn: 3600)
        harness.launch()
        harness.activation.fire()
        harness.clock.advance(by: 3500)
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.session == nil)
        #expect(
            await harness.events().suffix(3) == [
                "statusChanged(signedIn → validating)", "statusChanged(validating → signedOut)",
                "logout(AuthSessionError.sessionExpired: The authentication session has timed out.)",
            ]
        )
    }

    @Test("a sign-out that throws is reported as signingOutFailure; the status stays signed out")
    func throwingSignOut() async {
        let harness = Harness(expiresIn: 60)
        harness.provider.signOutBehavior = .throwing(URLError(.timedOut))
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        let events = await harness.events()
        #expect(events.last?.hasPrefix("failure(AuthSessionError.signingOutFailure: Sign-out failed:") == true)
    }
}

@Suite("Integration")
struct IntegrationTests {

    @Test("launch with a valid session: signed in, no sign-out, no prompt")
    func launchValid() async {
        let harness = Harness(expiresIn: 3600)
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.provider.signOutCount == 0)
        #expect(
            await harness.events() == [
                "statusChanged(syncing → validating)", "statusChanged(validating → signedIn)", "sessionFetch(initial)",
            ]
        )
    }

    @Test("launch with an expired session: signed out with sessionExpired, one logout")
    func launchExpired() async {
        let harness = Harness(expiresIn: -10)
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(
            await harness.events() == [
                "statusChanged(syncing → validating)", "statusChanged(validating → signedOut)", "sessionFetch(initial)",
                // The provider's own sign-out event follows the step that asked for it.
                "logout(AuthSessionError.sessionExpired: The authentication session has timed out.)",
            ]
        )
    }

    @Test("launch with no session: signed out, no sign-out call")
    func launchMissing() async {
        let harness = Harness(expiresIn: nil)
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutCount == 0)
        #expect(await harness.events() == ["statusChanged(syncing → signedOut)", "sessionFetch(initial)"])
    }

    @Test("launch fetch fails with a cached valid session: the user stays signed in")
    func launchFetchFails() async {
        let harness = Harness(expiresIn: 3600)
        harness.provider.publish(.fetchingSession)
        harness.provider.publish(.sessionFetchFailed(URLError(.notConnectedToInternet)))
        #expect(harness.handle.sessionStatus == .signedIn)
        let events = await harness.events()
        #expect(events.first == "statusChanged(syncing → signedIn)")
        #expect(events.last?.hasPrefix("failure(AuthSessionError.sessionFetchFailed") == true)
    }

    @Test("sign in, then sign out")
    func signInThenSignOut() async {
        let harness = Harness(expiresIn: nil)
        harness.launch()
        harness.provider.session = harness.session(expiresIn: 3600)
        harness.provider.publish(.sessionSignIn)
        #expect(harness.handle.sessionStatus == .signedIn)
        try? harness.provider.signout()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(
            await harness.events() == [
                "statusChanged(syncing → signedOut)", "sessionFetch(initial)", "statusChanged(signedOut → signedIn)",
                "login",
                "statusChanged(signedIn → signedOut)", "logout(nil)",
            ]
        )
    }

    @Test("auto-refresh provider: refreshes are trusted, no local expiry checks, no sign-out")
    func autoRefresh() async {
        let harness = Harness(expiresIn: 60, localValidation: false, autoRefresh: true)
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedIn)
        harness.provider.publish(.fetchingSession)
        harness.provider.session = harness.session(expiresIn: 30)
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        harness.activation.fire()
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.provider.signOutCount == 0)
    }

    @Test("biometric unlock at launch")
    func biometricUnlock() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .success)
        try await harness.recorder.waitForStatus(.signedIn)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.handle.isBiometricAuthenticationInProcess == false)
        #expect(
            await harness.statusChanges() == [
                "syncing → validating", "validating → biometricAuthentication", "biometricAuthentication → signedIn",
            ]
        )
    }

    @Test("foreground revalidation after expiry")
    func foregroundAfterExpiry() async {
        let harness = Harness(expiresIn: 1800)
        harness.launch()
        harness.activation.fire()
        harness.clock.advance(by: 1700)
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutCount == 1)
        #expect(await harness.statusChanges().suffix(2) == ["signedIn → validating", "validating → signedOut"])
    }
}
