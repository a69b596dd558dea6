import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// Providers that break the rules. Each case ends in the state the article "The session lifecycle" documents, with a
/// typed error where one is due, and never deadlocks or crashes.
@Suite("Hostile providers")
struct HostileProviderTests {

    @Test("events published after the handle is gone are dropped")
    func eventsAfterHandleIsGone() async {
        let recorder = RecordingAuthSessionDelegate()
        let provider: MockSessionProvider
        var proxy: (any AuthSessionEventProxy)?
        do {
            let harness = Harness(expiresIn: 60, subscribe: false)
            harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
            provider = harness.provider
            proxy = harness.handle.sessionEventProxy
        }
        for event: AuthSessionEvent in [.fetchingSession, .sessionFetched(isInitialFetch: true), .sessionSignIn] {
            proxy?.publish(event, for: provider)
        }
        await recorder.drain()
        #expect(recorder.events.isEmpty, "no observer hears from a handle that is gone")
        #expect(provider.signOutCount == 0, "the expired session was not validated")
    }

    @Test("duplicate launch fetches: validated once, one prompt, the repeat is a refresh")
    func duplicateInitialFetches() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        try await harness.authenticator.resolveNextPrompt(with: .success)
        await harness.handle.waitForBiometricPrompt()
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(harness.authenticator.promptCount == 1)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(
            await harness.events() == [
                "statusChanged(syncing → validating)", "statusChanged(validating → biometricAuthentication)",
                "sessionFetch(initial)",
                "sessionFetch(initial)", "sessionFetch(initial)", "statusChanged(biometricAuthentication → signedIn)",
                "sessionFetch(initial)",
            ]
        )
    }

    @Test("a fetch result before any fetchingSession is handled like any other")
    func fetchResultBeforeFetching() {
        let harness = Harness(expiresIn: 3600)
        harness.provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(harness.handle.sessionStatus == .signedIn)
        let failing = Harness(expiresIn: nil)
        failing.provider.publish(.sessionFetchFailed(URLError(.timedOut)))
        #expect(failing.handle.sessionStatus == .signedOut)
    }

    @Test("sessionSignIn with no session is trusted: signed in, the login carries no user")
    func signInWithoutSession() async {
        let harness = Harness(expiresIn: nil)
        harness.provider.publish(.sessionSignIn)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(await harness.events() == ["statusChanged(syncing → signedIn)", "login"])
        #expect(harness.recorder.records.last?.user == nil)
        // The next fetch result corrects it.
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        #expect(harness.handle.sessionStatus == .signedOut)
    }

    @Test("a signout(with:) that throws: signingOutFailure with the cause, and the user stays signed out")
    func throwingSignOut() async throws {
        let harness = Harness(expiresIn: 100)
        harness.provider.signOutBehavior = .throwing(URLError(.cannotFindHost))
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        _ = await harness.events()
        guard case .failure(.signingOutFailure(let cause)) = harness.recorder.events.last else {
            Issue.record("expected signingOutFailure, got \(harness.recorder.events)")
            return
        }
        #expect((cause as? URLError)?.code == .cannotFindHost)
        // Activations cannot sign the user back in with the session the provider failed to drop.
        harness.activation.fire()
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedOut)
    }

    @Test("a signout(with:) that publishes sessionSignedOut from inside itself: one status change, one logout")
    func publishingSignOut() async {
        let harness = Harness(expiresIn: 100)
        harness.launch()
        let events = await harness.events()
        #expect(events.filter { $0.hasPrefix("statusChanged(validating → signedOut)") }.count == 1)
        #expect(events.filter { $0.hasPrefix("logout") }.count == 1)
    }

    @Test("a silent signout(with:): the handle is signed out anyway, with no logout callback")
    func silentSignOut() async {
        let harness = Harness(expiresIn: 100)
        harness.provider.signOutBehavior = .silent
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(await harness.events().contains { $0.hasPrefix("logout") } == false)
    }

    @Test("sessionSignedOut twice: one status change, two logouts (one per event)")
    func doubleSignedOut() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        harness.provider.publish(.sessionSignedOut(error: nil))
        harness.provider.publish(.sessionSignedOut(error: nil))
        #expect(
            await harness.events() == [
                "statusChanged(syncing → signedIn)", "login", "statusChanged(signedIn → signedOut)", "logout(nil)",
                "logout(nil)",
            ]
        )
    }

    @Test("a provider publishing launch fetches from many threads at once: one validation, at most one prompt")
    func launchFromManyThreads() async throws {
        let harness = Harness(biometric: true)
        await onParallelThreads(8) { _ in
            for _ in 0..<50 {
                harness.provider.publish(.sessionFetched(isInitialFetch: true))
            }
        }
        await harness.handle.waitUntilIdle()
        try await harness.authenticator.waitForPendingPrompt()
        #expect(harness.authenticator.promptCount == 1)
        #expect(await harness.statusChanges() == ["syncing → validating", "validating → biometricAuthentication"])
        #expect(await harness.events().filter { $0 == "sessionFetch(initial)" }.count == 400)
    }

    @Test("a provider whose policy answers change between calls cannot break the invariants")
    func flappingPolicies() async {
        let harness = Harness(biometric: true)
        await onParallelThreads(4) { thread in
            for step in 0..<500 {
                switch (thread + step) % 4 {
                case 0: harness.provider.allowsLocalSessionValidation.toggle()
                case 1: harness.provider.isBioMetricAuthenticationEnabled.toggle()
                case 2: harness.provider.publish(.sessionFetched(isInitialFetch: step.isMultiple(of: 3)))
                default: harness.activation.fire()
                }
            }
        }
        #expect(harness.authenticator.pendingPromptCount <= 1)
        harness.provider.isBioMetricAuthenticationEnabled = false
        harness.authenticator.automaticOutcome = .success
        await harness.handle.waitUntilIdle()
        while harness.authenticator.resolvePendingPrompt(with: .success) {}
        await harness.handle.waitForBiometricPrompt()
        await harness.recorder.drain()
        #expect(isChain(harness.recorder.statusChanges, from: .syncing))
        #expect(harness.handle.sessionStatus != .biometricAuthentication)
    }

    @Test("a session whose expiry is not a number, or infinite, is expired")
    func nonFiniteExpiryIsExpired() {
        for expiresAt in [TimeInterval.nan, .infinity, -.infinity, .signalingNaN] {
            let session = MockSession(expiresAt: expiresAt)
            #expect(session.isSessionExpired(at: Date()), "expiresAt \(expiresAt)")
            #expect(session.expiresIn(at: Date()) == 0, "expiresAt \(expiresAt)")
        }
        let harness = Harness()
        harness.provider.session = MockSession(expiresAt: .nan)
        harness.launch()
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.signOutCount == 1)
    }
}
