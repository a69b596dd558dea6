import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("ManagedSessionProvider: launch (rule 1)")
struct ManagerLaunchTests {

    @Test("a valid stored session is signed in before the handle's initializer returns: no sign-in flash")
    func restoresWithoutFlash() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let harness = ManagerHarness(stored: stored, server: server, clock: clock)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.provider.session == stored)
        await harness.settle()
        #expect(server.refreshCount == 0, "nothing was due")
        #expect(harness.logouts.isEmpty)
    }

    @Test("no stored session: signed out, and a token request says notSignedIn")
    func nothingStored() async throws {
        let harness = ManagerHarness()
        #expect(harness.handle.sessionStatus == .signedOut)
        await #expect(throws: ManagedSessionError.notSignedIn) { try await harness.provider.validAccessToken() }
    }

    @Test(
        "a token inside the refresh margin is refreshed before the launch ends: loading, then signed in on new tokens"
    )
    func dueAtLaunch() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        clock.advance(by: 3600 - 30)
        server.holdsRefreshes = true
        let harness = ManagerHarness(stored: stored, server: server, clock: clock)
        try await server.waitForHeldRefreshes(1)
        #expect(harness.handle.sessionStatus == .syncing, "loading while the launch refresh runs, never signed out")
        server.releaseHeldRefreshes()
        try await harness.recorder.waitForStatus(.signedIn)
        await harness.settle()
        let session = try #require(harness.provider.session)
        #expect(session.accessToken != stored.accessToken)
        #expect(harness.store.storedSession == session, "what is published is what is stored")
        #expect(server.presentedRefreshTokens == [stored.refreshToken])
    }

    @Test("a transient failure of the launch refresh keeps the stored session: signed in, the failure reported")
    func transientAtLaunch() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        clock.advance(by: 3600 - 30)
        server.enqueueRefreshFaults([.unavailable, .unavailable, .unavailable])
        let harness = ManagerHarness(stored: stored, server: server, clock: clock)
        try await harness.recorder.waitForStatus(.signedIn)
        await harness.settle()
        #expect(harness.provider.session == stored)
        #expect(harness.store.storedSession == stored)
        #expect(harness.logouts.isEmpty)
        #expect(
            harness.recorder.events.contains {
                if case .failure(.sessionFetchFailed) = $0 { return true }
                return false
            }
        )
    }

    @Test("a locked store keeps the status loading, never signs out, and restores once it opens (activation)")
    func unavailableStore() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let store = MockSessionStore(session: stored)
        store.isUnavailable = true
        let harness = ManagerHarness(store: store, server: server, clock: clock)
        #expect(harness.handle.sessionStatus == .syncing)
        harness.activation.fire()
        harness.activation.fire()
        await harness.settle()
        #expect(harness.handle.sessionStatus == .syncing, "still loading: unavailable is not signed out")
        #expect(store.storedSession == stored, "nothing deleted")
        store.isUnavailable = false
        harness.activation.fire()
        try await harness.recorder.waitForStatus(.signedIn)
        #expect(harness.provider.session == stored)
        #expect(harness.logouts.isEmpty)
    }

    @Test("a locked store is loaded again on the clock, with backoff")
    func unavailableStoreRetriesOnTheClock() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let store = MockSessionStore(session: stored)
        store.isUnavailable = true
        let harness = ManagerHarness(store: store, server: server, clock: clock)
        try await clock.waitForSleepers()
        #expect(clock.advanceToNextDeadline() == 2)
        try await clock.waitForSleepers()
        #expect(clock.advanceToNextDeadline() == 4)
        try await clock.waitForSleepers()
        store.isUnavailable = false
        _ = clock.advanceToNextDeadline()
        try await harness.recorder.waitForStatus(.signedIn)
        #expect(store.loadCount == 4)
    }

    @Test("corrupt stored data: signed out with the typed cause")
    func corruptStore() async throws {
        let store = MockSessionStore(session: sampleSession())
        store.corruptNextLoad()
        let harness = ManagerHarness(store: store)
        #expect(harness.handle.sessionStatus == .signedOut)
        await #expect(throws: ManagedSessionError.notSignedIn) { try await harness.provider.validAccessToken() }
    }
}

@Suite("ManagedSessionProvider: refresh and failures (rules 3, 4, 5, 10, 11)")
struct ManagerRefreshTests {

    @Test("the proactive refresh runs at expiry minus 60 s on the clock, silently: no loading status")
    func proactiveRefresh() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        try await harness.clock.waitForSleepers()
        #expect(harness.clock.nextDeadline == Date(timeIntervalSince1970: first.expiresAt - 60))
        await harness.settle()  // the sign-in's own status change delivered first
        let mark = harness.recorder.statusChanges.count
        _ = harness.clock.advanceToNextDeadline()
        await harness.settle()
        try await harness.clock.waitForSleepers()
        let second = try #require(harness.provider.session)
        #expect(second.accessToken != first.accessToken)
        #expect(harness.store.storedSession == second)
        #expect(harness.recorder.statusChanges.count == mark, "silent: no status change at all")
        #expect(harness.clock.nextDeadline == Date(timeIntervalSince1970: second.expiresAt - 60), "re-armed")
    }

    @Test("many concurrent callers on an expired token share one refresh and get the same token")
    func singleFlight() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.server.holdsRefreshes = true
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<200 {
                group.addTask { try await harness.provider.validAccessToken() }
            }
            try await harness.server.waitForHeldRefreshes(1)
            harness.server.releaseHeldRefreshes()
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(harness.server.refreshCount == 1)
        #expect(Set(tokens).count == 1)
        #expect(tokens.first == harness.provider.session?.accessToken)
    }

    @Test("a cancelled caller leaves; the shared refresh goes on and serves the others")
    func cancellationLeavesTheRefresh() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.server.holdsRefreshes = true
        let cancelled = Task { try await harness.provider.validAccessToken() }
        let kept = Task { try await harness.provider.validAccessToken() }
        try await harness.server.waitForHeldRefreshes(1)
        cancelled.cancel()
        await #expect(throws: ManagedSessionError.cancelled) { try await cancelled.value }
        harness.server.releaseHeldRefreshes()
        let token = try await kept.value
        #expect(token == harness.provider.session?.accessToken)
        #expect(harness.server.refreshCount == 1)
    }

    @Test("a transient failure never signs out: reported, the session kept, the next call retries")
    func transientKeepsSession() async throws {
        let harness = ManagerHarness(retryPolicy: .never)
        let first = try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.server.enqueueRefreshFaults([.unavailable])
        await #expect(throws: ManagedSessionError.remote(RemoteAuthError(.httpStatus(503), statusCode: 503))) {
            try await harness.provider.validAccessToken()
        }
        await harness.settle()
        #expect(harness.provider.session == first)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.logouts.isEmpty)
        let token = try await harness.provider.validAccessToken()
        #expect(token != first.accessToken)
        #expect(harness.server.duplicatePresentations == [first.refreshToken], "503: the server did not act")
    }

    @Test("an answer lost after the server rotated is not retried within the refresh; the session stands")
    func uncertainOutcome() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.server.enqueueRefreshFaults([.answerLost])
        await #expect(throws: ManagedSessionError.self) { try await harness.provider.validAccessToken() }
        #expect(harness.server.refreshCount == 1, "not presented again by the retry policy")
        #expect(harness.provider.session == first)
        #expect(harness.handle.sessionStatus == .signedIn)
    }

    @Test("a terminal answer signs out exactly once, with the typed cause, and empties the store")
    func terminalSignsOutOnce() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.server.enqueueRefreshFaults([.invalidGrant])
        harness.server.holdsRefreshes = true
        let callers = (0..<20).map { _ in Task { try await harness.provider.validAccessToken() } }
        try await harness.server.waitForHeldRefreshes(1)
        harness.server.releaseHeldRefreshes()
        for caller in callers {
            await #expect(throws: ManagedSessionError.self) { try await caller.value }
        }
        await harness.settle()
        #expect(harness.logouts.count == 1)
        if case .logout(let error) = harness.logouts.first {
            #expect((error as? ManagedSessionError)?.endsSession == true)
        }
        #expect(harness.store.storedSession == nil)
        #expect(harness.provider.session == nil)
        #expect(harness.handle.sessionStatus == .signedOut)
    }

    @Test("a misconfiguration is reported and not retried in a loop; an explicit refresh tries again")
    func misconfigurationNotLooped() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.server.enqueueRefreshFaults([.invalidClient])
        await #expect(throws: ManagedSessionError.self) { try await harness.provider.validAccessToken() }
        for _ in 0..<5 {
            await #expect(throws: ManagedSessionError.self) { try await harness.provider.validAccessToken() }
        }
        #expect(harness.server.refreshCount == 1, "one request, not six")
        harness.activation.fire()
        harness.activation.fire()
        await harness.settle()
        #expect(harness.server.refreshCount == 1, "activations do not loop it either")
        #expect(harness.provider.session == first)
        let refreshed = try await harness.provider.refresh()
        #expect(refreshed.accessToken != first.accessToken)
    }

    @Test("a store write that fails after a rotation keeps the new tokens, reports it, and retries the write")
    func writeFailsAfterRotation() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        harness.clock.advance(by: 3600)
        harness.store.failsWrites = true
        let token = try await harness.provider.validAccessToken()
        #expect(token != first.accessToken, "the new tokens are used: the old refresh token is spent")
        #expect(harness.store.storedSession == first)
        await harness.settle()
        #expect(
            harness.recorder.events.contains {
                if case .failure(.sessionFetchFailed(let error)) = $0 { return error is ManagedSessionError }
                return false
            }
        )
        harness.store.failsWrites = false
        // Two sleepers: the write's retry and the next proactive refresh.
        try await harness.clock.waitForSleepers(2)
        #expect(harness.clock.advanceToNextDeadline() == 2, "the write is retried first, 2 s later")
        try await waitUntil { harness.store.storedSession?.accessToken == token }
        // The unsaved tokens are what the next refresh presents, not the spent stored ones.
        _ = try await harness.provider.refresh()
        #expect(harness.server.duplicatePresentations.isEmpty)
    }

    @Test("an activation refreshes a due token (here after the timer's try failed), silently")
    func activationRefreshesWhenDue() async throws {
        let harness = ManagerHarness(retryPolicy: .never)
        let first = try await harness.signIn()
        harness.server.enqueueRefreshFaults([.unavailable])
        try await harness.clock.waitForSleepers()
        _ = harness.clock.advanceToNextDeadline()  // the proactive refresh: answered 503
        await harness.settle()
        #expect(harness.server.refreshCount == 1)
        #expect(harness.provider.session == first)
        let mark = harness.recorder.statusChanges.count
        harness.activation.fire()
        harness.activation.fire()
        await harness.settle()
        #expect(harness.server.refreshCount == 2, "the activation tried again, before the retry timer")
        #expect(harness.provider.session?.accessToken != first.accessToken)
        #expect(harness.recorder.statusChanges.count == mark, "silent")
    }

    @Test("explicit refresh joins the one in flight")
    func explicitRefreshJoins() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        harness.server.holdsRefreshes = true
        let one = Task { try await harness.provider.refresh() }
        try await harness.server.waitForHeldRefreshes(1)
        let two = Task { try await harness.provider.refresh() }
        try await waitUntil { harness.provider.waitingCallerCount == 2 }
        harness.server.releaseHeldRefreshes()
        let (a, b) = try await (one.value, two.value)
        #expect(a == b)
        #expect(harness.server.refreshCount == 1)
    }

    @Test("two managers sharing a store: the second adopts the first's rotation instead of presenting a spent token")
    func adoptsRotationFromTheStore() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let store = MockSessionStore(session: stored)
        let first = ManagerHarness(store: store, server: server, clock: clock)
        let second = ManagerHarness(store: store, server: server, clock: clock)
        let rotated = try await first.provider.refresh()
        let adopted = try await second.provider.refresh()
        #expect(adopted.accessToken == rotated.accessToken)
        #expect(server.refreshCount == 1)
        #expect(second.logouts.isEmpty)
    }
}

@Suite("ManagedSessionProvider: sign-in, sign-out, generations (rules 6, 7, 8)")
struct ManagerGenerationTests {

    @Test("sign-in stores first, then publishes; a failing store fails the sign-in and revokes the new tokens")
    func signInStoreFailure() async throws {
        let harness = ManagerHarness()
        harness.store.failsWrites = true
        await #expect(throws: ManagedSessionError.storage(.io(operation: "write", path: "mock-store", code: EIO))) {
            try await harness.signIn()
        }
        await harness.settle()
        #expect(harness.provider.session == nil)
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.server.revokedTokens.count == 1)
        #expect(harness.server.liveFamilyCount == 0)
    }

    @Test("sign-out while a refresh is in flight: the store stays empty and nothing more is published")
    func signOutDuringRefresh() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        harness.server.holdsRefreshes = true
        let refresh = Task { try await harness.provider.refresh() }
        try await harness.server.waitForHeldRefreshes(1)
        try harness.provider.signout()
        await #expect(throws: ManagedSessionError.self) { try await refresh.value }
        // Not settle(): the refresh is still held at the server, so the manager is not idle.
        await harness.handle.waitUntilIdle()
        await harness.recorder.drain()
        let published = harness.recorder.count
        harness.server.releaseHeldRefreshes()
        await harness.settle()
        #expect(harness.store.storedSession == nil)
        #expect(harness.provider.session == nil)
        #expect(harness.recorder.count == published, "nothing after the sign-out")
        #expect(harness.logouts.count == 1)
    }

    @Test("user B signing in during user A's refresh keeps B's session intact")
    func signInDuringRefresh() async throws {
        let harness = ManagerHarness()
        try await harness.signIn(alice)
        harness.server.holdsRefreshes = true
        let refresh = Task { try await harness.provider.refresh() }
        try await harness.server.waitForHeldRefreshes(1)
        let bobSession = try await harness.signIn(bob)
        await #expect(throws: ManagedSessionError.superseded) { try await refresh.value }
        harness.server.releaseHeldRefreshes()
        await harness.settle()
        #expect(harness.provider.session == bobSession)
        #expect(harness.store.storedSession == bobSession)
        #expect(harness.logouts.isEmpty)
    }

    @Test("a sign-out during a sign-in drops the sign-in: nothing stored, its tokens revoked")
    func signOutDuringSignIn() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: SlowSignInRemote(server: server, clock: clock, delay: 1),
            clock: clock,
            configuration: .init(activationSignal: ManualActivationSignal())
        )
        let signIn = Task {
            try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        }
        try await clock.waitForSleepers()
        try provider.signout()
        clock.advance(by: 1)
        await #expect(throws: ManagedSessionError.superseded) { try await signIn.value }
        await provider.waitUntilIdle()
        #expect(provider.session == nil)
        #expect(server.liveFamilyCount == 0, "the dropped sign-in's tokens are revoked")
    }

    @Test("after a sign-out through the handle's provider, nothing is stored and no token stays live")
    func signOutLeavesNothingLive() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let harness = ManagerHarness(server: server, clock: clock)
        try await harness.signIn()
        try harness.provider.signout()
        await harness.settle()
        #expect(harness.store.storedSession == nil)
        #expect(harness.provider.session == nil)
        #expect(server.liveFamilyCount == 0)
    }

    @Test("sign-out is local first, then revokes the refresh token at the server")
    func signOutRevokes() async throws {
        let harness = ManagerHarness()
        let session = try await harness.signIn()
        try harness.provider.signout()
        #expect(harness.provider.session == nil)
        #expect(harness.store.storedSession == nil)
        await harness.settle()
        #expect(harness.server.revokedTokens == [session.refreshToken])
        #expect(!harness.server.isAccessTokenValid(session.accessToken))
    }

    @Test("a second sign-in without profile fields keeps those the first one sent")
    func profileMerge() async throws {
        let harness = ManagerHarness()
        let first = try await harness.signIn()
        #expect(first.user.name == "Alice")
        try harness.provider.signout()
        let second = try await harness.signIn()
        #expect(second.user.name == "Alice")
        #expect(second.user.email == "alice@example.com")
    }

    @Test("the biometric setting is stored, and survives a refresh")
    func biometricSetting() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        harness.provider.setBioMetricAuthentication(true)
        #expect(harness.store.storedSession?.isBiometricAuthenticationEnabled == true)
        #expect(harness.provider.isBioMetricAuthenticationEnabled)
        try await harness.provider.refresh()
        #expect(harness.store.storedSession?.isBiometricAuthenticationEnabled == true)
    }

    @Test("live tokens are redacted exactly while they are live")
    func redaction() async throws {
        let harness = ManagerHarness()
        let session = try await harness.signIn()
        let token = try #require(session.refreshToken)
        #expect(!SecretRedactor.redact("t=\(session.accessToken)").contains(session.accessToken))
        #expect(!SecretRedactor.redact("t=\(token)").contains(token))
        let refreshed = try await harness.provider.refresh()
        #expect(!SecretRedactor.redact("x \(refreshed.accessToken) y").contains(refreshed.accessToken))
    }
}

@Suite("ManagedSessionProvider: credential state (rule 9)")
struct ManagerCredentialTests {

    @Test("revoked elsewhere: the launch check signs out once")
    func revokedAtLaunch() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        server.revokeAllSessions(of: alice.identifier)
        let harness = ManagerHarness(stored: stored, server: server, clock: clock, checksCredentialState: true)
        try await harness.recorder.waitForStatus(.signedOut)
        await harness.settle()
        #expect(harness.logouts.count == 1)
        #expect(harness.store.storedSession == nil)
    }

    @Test("a network error on the check changes nothing; activations check again, throttled")
    func networkErrorAndThrottle() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        server.enqueueCredentialStateFaults([.unavailable])
        let harness = ManagerHarness(stored: stored, server: server, clock: clock, checksCredentialState: true)
        await harness.settle()
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(server.credentialStateCount == 1)
        harness.activation.fire()
        harness.activation.fire()
        await harness.settle()
        #expect(server.credentialStateCount == 1, "throttled")
        clock.advance(by: 301)
        server.revokeAllSessions(of: alice.identifier)
        harness.activation.fire()
        try await harness.recorder.waitForStatus(.signedOut)
        await harness.settle()
        #expect(server.credentialStateCount == 2)
        #expect(harness.logouts.count == 1)
    }

    @Test(
        "a revoked verdict on a session with a refresh token is confirmed by a refresh: accepted, the session stays"
    )
    func verdictConfirmedByRefresh() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let provider = ManagedSessionProvider(
            store: MockSessionStore(session: stored),
            remote: FixedVerdictRemote(server: server, verdict: .revoked),
            clock: clock,
            configuration: .init(activationSignal: ManualActivationSignal())
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        #expect(server.refreshCount == 1, "the verdict asked the refresh token")
        #expect(provider.session != nil && provider.session?.accessToken != stored.accessToken)
        #expect(handle.sessionStatus == .signedIn)
    }

    @Test("a pushed revocation signs out once")
    func pushedRevocation() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        NotificationCenter.default.post(name: harness.revocationName, object: nil)
        NotificationCenter.default.post(name: harness.revocationName, object: nil)
        await harness.settle()
        #expect(harness.logouts.count == 1)
        #expect(harness.provider.session == nil)
    }

    @Test("Sign in with Apple's credential states map by raw value")
    func appleMapping() {
        #expect(CredentialState(appleIDCredentialStateRawValue: 0) == .revoked)
        #expect(CredentialState(appleIDCredentialStateRawValue: 1) == .authorized)
        #expect(CredentialState(appleIDCredentialStateRawValue: 2) == .notFound)
        #expect(CredentialState(appleIDCredentialStateRawValue: 3) == .transferred)
        #expect(CredentialState(appleIDCredentialStateRawValue: 4) == nil)
    }

    @Test(
        "a Sign in with Apple answer's error is read for what it says: the network is transient, a missing capability a misconfiguration, revoked and transferred verdicts, an unknown state nothing"
    )
    func appleCredentialCheck() throws {
        typealias Link = AppleIDCredentialAnswer.ErrorLink
        func check(_ raw: Int, _ errors: [Link] = []) -> CredentialState.AppleIDCheck {
            CredentialState.appleIDCredentialCheck(AppleIDCredentialAnswer(stateRawValue: raw, errors: errors))
        }
        let authorization = Link(domain: "com.apple.AuthenticationServices.AuthorizationError", code: 1000)
        for raw in 0...3 {
            #expect(check(raw) == .decided(.success(CredentialState(appleIDCredentialStateRawValue: raw)!)))
        }
        // Explicit verdicts stand with an error too.
        #expect(check(0, [authorization]) == .decided(.success(.revoked)))
        #expect(check(3, [authorization]) == .decided(.success(.transferred)))
        #expect(check(1, [authorization]) == .decided(.success(.authorized)))
        // The network, anywhere in the chain: transient.
        let offline = check(2, [authorization, Link(domain: "NSURLErrorDomain", code: -1009)])
        guard case .decided(.failure(let network)) = offline else {
            Issue.record("a network error was taken as a verdict: \(offline)")
            return
        }
        #expect(network.kind == .transient)
        #expect(network.reason == .network(code: -1009))
        // The Apple ID daemon's -7026: the app lacks the capability; reported, nothing changes.
        let missing = check(2, [authorization, Link(domain: "AKAuthenticationError", code: -7026)])
        guard case .decided(.failure(let capability)) = missing else {
            Issue.record("a missing capability was taken as a verdict: \(missing)")
            return
        }
        #expect(capability.kind == .misconfiguration)
        #expect(!"\(capability.problem)".localizedCaseInsensitiveContains("offline"))
        // A revocation on the web: notFound with an unexplained error is asked again.
        #expect(check(2, [authorization, Link(domain: "AKAuthenticationError", code: -7074)]) == .askAgain)
        #expect(check(2, [authorization]) == .askAgain)
        guard case .decided(.failure(let unknown)) = check(7) else {
            Issue.record("an unknown state was taken as a verdict")
            return
        }
        #expect(unknown.kind == .misconfiguration)
    }

    @Test(
        "notFound with an unexplained error (a revocation on the web) is a verdict when Apple says it twice; a second answer that differs wins"
    )
    func appleNotFoundConfirmed() async throws {
        let webRevocation = AppleIDCredentialAnswer(
            stateRawValue: 2,
            errors: [.init(domain: "com.apple.AuthenticationServices.AuthorizationError", code: 1000)]
        )
        func state(_ answers: [AppleIDCredentialAnswer]) async -> (Result<CredentialState, RemoteAuthError>, Int) {
            let remaining = ConcurrencySafeContainer(answers)
            let asked = ConcurrencySafeContainer(0)
            let result = await CredentialState.appleIDCredentialState {
                asked.withLock { $0 += 1 }
                return remaining.withLock { $0.removeFirst() }
            } pause: {
                true
            }
            return (result, asked.withLock { $0 })
        }
        let (twice, askedTwice) = await state([webRevocation, webRevocation])
        #expect(try twice.get() == .notFound, "a .deviceOnly session revoked on the web is signed out")
        #expect(askedTwice == 2)
        let (recovered, _) = await state([webRevocation, AppleIDCredentialAnswer(stateRawValue: 1, errors: [])])
        #expect(try recovered.get() == .authorized, "a one-off answer signs nobody out")
        let (direct, askedOnce) = await state([AppleIDCredentialAnswer(stateRawValue: 0, errors: [])])
        #expect(try direct.get() == .revoked)
        #expect(askedOnce == 1)
    }

    @Test("the chain of an error: its domain and code, then its underlying errors'")
    func appleErrorChain() {
        let inner = NSError(domain: "AKAuthenticationError", code: -7026)
        let outer = NSError(
            domain: "com.apple.AuthenticationServices.AuthorizationError",
            code: 1000,
            userInfo: [NSUnderlyingErrorKey: inner]
        )
        #expect(
            AppleIDCredentialAnswer.chain(of: outer) == [
                .init(domain: "com.apple.AuthenticationServices.AuthorizationError", code: 1000),
                .init(domain: "AKAuthenticationError", code: -7026),
            ]
        )
        #expect(AppleIDCredentialAnswer.chain(of: nil).isEmpty)
    }
}
