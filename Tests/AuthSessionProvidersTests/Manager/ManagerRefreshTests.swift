import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

extension ManagerRefreshTests {

    // "Calls, configuration and errors", errors table: a transient failure "Keeps the session and tries later (the next
    // call, the next activation, the timer)"; "The manager refreshes before expiry on its own".
    @Test("after a transient failure of the timed refresh, the manager tries again: the token does not just expire")
    func timerRearmedAfterTransientFailure() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let rig = advRig(store: MockSessionStore(), server: server, clock: clock)
        let session = try await rig.provider.signIn(with: advGrant(advAda))
        try await clock.waitForSleepers(1)  // the proactive refresh timer

        server.enqueueRefreshFaults([.unavailable])
        clock.advance(by: session.expiresAt - 60 - clock.now.timeIntervalSince1970)
        await rig.provider.waitUntilIdle()
        #expect(server.refreshCount == 1)
        #expect(rig.provider.session?.accessToken == session.accessToken, "the session stands: right")

        // Time passes: before expiry, then long after. No call and no activation.
        clock.advance(by: 59)
        await rig.provider.waitUntilIdle()
        clock.advance(by: 3600)
        await rig.provider.waitUntilIdle()

        #expect(server.refreshCount > 1, "nothing ever tried again: the session silently expired")
    }

    @Test("a server answering expires_in 0 does not make the manager refresh in a hot loop")
    func zeroLifetimeTokenDoesNotRefreshInAHotLoop() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        server.accessTokenLifetime = 0  // OAuth2Service accepts `expires_in: 0` (only < 0 is refused)
        let rig = advRig(store: MockSessionStore(), server: server, clock: clock)
        try await rig.provider.signIn(with: advGrant(advAda))

        let looped = await advEventually(timeout: 5) { server.refreshCount >= 100 }
        try? rig.provider.signout()  // ends the loop
        await rig.provider.waitUntilIdle()

        #expect(!looped, "\(server.refreshCount) refreshes without the clock moving: a refresh storm")
    }

    // the documentation: "The handle never signs out for expiry either: the manager owns it"; errors table:
    // `.refreshUnavailable` "The access token expired and there is no refresh token. | Shows sign-in."
    @Test(
        "a session without a refresh token is signed out when it expires: the handle says signedOut, the token call says sign in"
    )
    func sessionWithoutRefreshTokenEndsAtExpiry() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.stripsRefreshTokens = true
        let activation = ManualActivationSignal()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: remote,
            retryPolicy: .never,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: activation)
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
        try await provider.signIn(with: advGrant(advAda))
        await handle.waitUntilIdle()
        #expect(handle.sessionStatus == .signedIn)

        clock.advance(by: 3601)
        activation.fire()
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        var thrown: ManagedSessionError?
        do { _ = try await provider.validAccessToken() } catch { thrown = error }
        // Signed out at expiry by the timer (refreshUnavailable); the call then says notSignedIn.
        #expect(thrown?.endsSession == true, "the error says: show sign-in")
        await handle.waitUntilIdle()

        #expect(
            handle.sessionStatus == .signedOut,
            "the handle still says \(handle.sessionStatus) with a dead session (the launch would have signed out)"
        )
    }

    @Test("a misconfiguration blocks the timer, activations and validAccessToken until an explicit refresh")
    func misconfigurationIsNotRetriedInALoop() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let rig = advRig(store: MockSessionStore(), server: server, clock: clock)
        let session = try await rig.provider.signIn(with: advGrant(advAda))
        try await clock.waitForSleepers(1)
        server.enqueueRefreshFaults(Array(repeating: .invalidClient, count: 10))
        clock.advance(by: session.expiresAt - 60 - clock.now.timeIntervalSince1970)
        await rig.provider.waitUntilIdle()
        #expect(server.refreshCount == 1)
        for _ in 0..<5 {
            clock.advance(by: 10)
            rig.activation.fire()
            await #expect(throws: ManagedSessionError.self) {
                try await rig.provider.validAccessToken(minimumValidity: 3600)
            }
            await rig.provider.waitUntilIdle()
        }
        #expect(server.refreshCount == 1)
        #expect(rig.log.signOutCount == 0)
    }

    @Test("cancelling callers never cancels the shared refresh; nobody hangs (1,000 rounds)")
    func cancellationLeavesTheSharedRefresh() async throws {
        for round in 0..<1_000 {
            let clock = ManualClock()
            let server = advServer(clock)
            let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
            let rig = advRig(store: store, server: server, clock: clock)
            server.holdsRefreshes = true  // before the clock moves: the proactive timer refreshes too
            clock.advance(by: 3600)  // expired
            let callers = (0..<8).map { _ in Task { try await rig.provider.validAccessToken() } }
            // Half cancel at once, some maybe before they registered.
            for caller in callers[0..<4] { caller.cancel() }
            // A safety net: under ThreadSanitizer, with the whole suite running on 2 cores, the
            // refresh's exchange may wait seconds for a thread of the pool.
            let held = await advEventually(timeout: 300) { server.heldRefreshCount == 1 }
            if !held {
                Issue.record(
                    "round \(round): no refresh held: \(rig.provider.waitingCallerCount) waiting, \(server.refreshCount) seen, session \(String(describing: rig.provider.session))"
                )
                break
            }
            for caller in callers[4..<6] { caller.cancel() }
            server.holdsRefreshes = false
            server.releaseHeldRefreshes()
            var tokens = Set<String>()
            var cancelled = 0
            for caller in callers {
                switch await caller.result {
                case .success(let token): tokens.insert(token)
                case .failure(let error as ManagedSessionError) where error == .cancelled: cancelled += 1
                case .failure(let error): Issue.record("round \(round): \(error)")
                }
            }
            await rig.provider.waitUntilIdle()
            // A caller cancelled before its task ran may still find the refreshed token valid on the
            // cheap path: a success, not a hang. The two callers never cancelled get the token.
            let live = rig.provider.session?.accessToken
            #expect(server.refreshCount == 1, "round \(round)")
            #expect(cancelled >= 2 && cancelled + tokens.count >= 3 && tokens.count == 1, "round \(round)")
            let allLive = live != nil && store.storedSession?.accessToken == live && tokens.first == live
            #expect(allLive, "round \(round)")
            if server.refreshCount != 1 || tokens.count != 1 || !allLive { break }
        }
    }

    @Test("a terminal refresh racing a pushed revocation signs out exactly once (2,000 rounds)")
    func oneSignOutForOneTerminalFailure() async throws {
        for round in 0..<2_000 {
            let clock = ManualClock()
            let server = advServer(clock)
            let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
            let rig = advRig(store: store, server: server, clock: clock)
            server.enqueueRefreshFaults([.invalidGrant])
            server.holdsRefreshes = true
            let callers = (0..<4).map { _ in Task { try await rig.provider.refresh() } }
            try await server.waitForHeldRefreshes(1)
            let provider = rig.provider
            let revoked = ConcurrencySafeContainer(false)
            let revocation = Thread {
                provider.handleCredentialRevocation()
                revoked.withLock { $0 = true }
            }
            server.holdsRefreshes = false
            revocation.start()
            server.releaseHeldRefreshes()
            for caller in callers { _ = await caller.result }
            #expect(await advEventually { revoked.withLock { $0 } })
            await rig.provider.waitUntilIdle()
            #expect(rig.log.signOutCount == 1, "round \(round): \(rig.log.signOutErrors)")
            if rig.log.signOutCount != 1 { break }
        }
    }

    @Test(
        "an answer lost is not retried within the refresh; the next presentation of the spent token signs out once (limit b)"
    )
    func lostAnswerIsTheDocumentedLimit() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(
            store: store,
            server: server,
            clock: clock,
            retryPolicy: RetryPolicy(maximumRetries: 3, initialDelay: 0)
        )
        server.enqueueRefreshFaults([.unavailable, .unavailable])  // certain failures: retried
        _ = try await rig.provider.refresh()
        #expect(server.refreshCount == 3)
        server.enqueueRefreshFaults([.answerLost])
        await #expect(throws: ManagedSessionError.self) { try await rig.provider.refresh() }
        #expect(server.refreshCount == 4, "an uncertain outcome is not retried")
        #expect(rig.provider.session != nil && rig.log.signOutCount == 0)
        _ = try? await rig.provider.refresh()
        await rig.provider.waitUntilIdle()
        #expect(rig.log.signOutCount == 1)
        #expect(server.presentedAfterAnsweredRotation.isEmpty)
    }

    @Test("64 concurrent callers on an expired token, 300 rounds: one presentation each, no duplicate")
    func oneRefreshForManyCallers() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        for round in 0..<300 {
            clock.advance(by: 3600)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<64 { group.addTask { try await rig.provider.validAccessToken() } }
                var tokens = Set<String>()
                for try await token in group { tokens.insert(token) }
                return tokens
            }
            #expect(tokens.count == 1, "round \(round)")
            #expect(server.refreshCount == round + 1, "round \(round)")
            if server.refreshCount != round + 1 { break }
        }
        #expect(server.duplicatePresentations.isEmpty)
    }

    // OpenID Connect Core §12.2: a refresh's ID token names the session's user. A refresh answer
    // for another subject silently turned the session into that user's.
    @Test("a refresh answered with another user's tokens ends the session and revokes those tokens")
    func refreshForAnotherSubjectEndsTheSession() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvSubjectSwappingRemote(server, answeringAs: advBob)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock, remote: remote)

        await #expect(throws: ManagedSessionError.self) { try await rig.provider.refresh() }
        await rig.provider.waitUntilIdle()

        #expect(rig.provider.session == nil, "the session became \(String(describing: rig.provider.session?.user))")
        #expect(store.storedSession == nil)
        let mismatch = IDTokenValidationError.subjectMismatch(expected: advAda.identifier, actual: advBob.identifier)
        #expect(rig.log.signOutErrors == [.remote(RemoteAuthError(.invalidIDToken(mismatch)))])
        #expect(rig.log.signOutErrors.first??.endsSession == true)
        let handedOut = try #require(remote.refreshTokensHandedOut.first)
        #expect(server.revokedTokens.contains(handedOut), "the other user's tokens are revoked")
    }
}
