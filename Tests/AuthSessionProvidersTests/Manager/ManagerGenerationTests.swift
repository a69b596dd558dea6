import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

extension ManagerGenerationTests {

    // The effects of a committed refresh run after its locks are released; a sign-in that commits
    // in between performs its own effects first, and the older refresh's then overwrite them.
    @Test(
        "a refresh committed just before a sign-in neither re-arms its stale timer over the new session's nor unregisters the new session's tokens from redaction"
    )
    func staleRefreshEffectsLeaveTheNewSession() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        let store = AdvHookStore(MockSessionStore())
        let rig = advRig(store: store, server: server, clock: clock, remote: remote)
        try await rig.provider.signIn(with: advGrant(advAda))

        store.pauseExclusiveAccess(skipping: 1)  // the claim; the commit pauses
        let refresh = Task { try await rig.provider.refresh() }
        #expect(await advEventually { store.isPaused }, "the refresh committed and paused before its effects")

        server.accessTokenLifetime = 7200
        let plainToken = "pumpernickel" + UUID().uuidString.prefix(8).lowercased()
        #expect(SecretRedactor.redact("x \(plainToken) y") == "x \(plainToken) y", "not a credential shape")
        remote.signInAccessToken = plainToken
        let bobSession = try await rig.provider.signIn(with: advGrant(advBob))
        #expect(SecretRedactor.redact(plainToken) == SecretRedactor.placeholder, "registered by the sign-in")
        store.release()
        _ = try await refresh.value
        await rig.provider.waitUntilIdle()

        #expect(rig.provider.session?.accessToken == plainToken)
        #expect(
            SecretRedactor.redact(plainToken) == SecretRedactor.placeholder,
            "the live session's token is no longer redacted"
        )
        #expect(
            clock.nextDeadline == Date(timeIntervalSince1970: bobSession.expiresAt - 60),
            "the proactive timer sleeps until the old session's refresh date"
        )
        let before = server.refreshCount
        clock.advance(by: bobSession.expiresAt - 59 - clock.now.timeIntervalSince1970)
        await rig.provider.waitUntilIdle()
        #expect(server.refreshCount == before + 1, "Bob's session was never refreshed before expiry")
        try? rig.provider.signout()
    }

    @Test(
        "a sign-out during a refresh wins: nothing stored or published after it, orphan revoked (1,000 rounds)"
    )
    func signOutDuringRefreshWins() async throws {
        for round in 0..<1_000 {
            let clock = ManualClock()
            let server = advServer(clock)
            let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
            let rig = advRig(store: store, server: server, clock: clock)
            server.holdsRefreshes = true
            let refresh = Task { try await rig.provider.refresh() }
            try await server.waitForHeldRefreshes(1)
            let provider = rig.provider
            let signedOut = ConcurrencySafeContainer(false)
            let signOut = Thread {
                try? provider.signout()
                signedOut.withLock { $0 = true }
            }
            server.holdsRefreshes = false
            signOut.start()
            server.releaseHeldRefreshes()
            _ = await refresh.result
            #expect(await advEventually { signedOut.withLock { $0 } })
            #expect(rig.log.signOutCount == 1, "round \(round)")
            await rig.provider.waitUntilIdle()
            let events = rig.log.events
            let signedOutAt = events.lastIndex { if case .sessionSignedOut = $0 { true } else { false } } ?? 0
            #expect(store.storedSession == nil, "round \(round)")
            #expect(rig.provider.session == nil, "round \(round)")
            #expect(events[signedOutAt...].count == 1, "round \(round): published after the sign-out: \(events)")
            #expect(server.liveFamilyCount == 0, "round \(round)")
            if store.storedSession != nil || server.liveFamilyCount != 0 { break }
        }
    }

    @Test(
        "another user's sign-in during a refresh wins; a write failure after rotation never presents the spent token"
    )
    func signInDuringRefreshAndWriteFailure() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        server.holdsRefreshes = true
        let refresh = Task { try await rig.provider.refresh() }
        try await server.waitForHeldRefreshes(1)
        try await rig.provider.signIn(with: advGrant(advBob))
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        await #expect(throws: ManagedSessionError.superseded) { try await refresh.value }
        await rig.provider.waitUntilIdle()
        #expect(store.storedSession?.user.identifier == advBob.identifier)
        #expect(server.liveFamilyCount == 1, "Alice's orphaned rotation was revoked")

        store.failsWrites = true
        let first = try await rig.provider.refresh()
        #expect(store.storedSession?.refreshToken != first.refreshToken)
        let second = try await rig.provider.refresh()
        #expect(server.presentedRefreshTokens.last == first.refreshToken)
        store.failsWrites = false
        clock.advance(by: 60)
        await rig.provider.waitUntilIdle()
        #expect(store.storedSession?.refreshToken == second.refreshToken)
        #expect(server.duplicatePresentations.isEmpty)
    }

    @Test("a sign-in cancelled while the server answers throws cancelled, and changes nothing")
    func cancelledSignIn() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = SlowSignInRemote(server: server, clock: clock, delay: 5)
        let store = MockSessionStore()
        let rig = advRig(store: store, server: server, clock: clock, remote: remote)
        let signIn = Task { try await rig.provider.signIn(with: advGrant(advAda)) }
        try await clock.waitForSleepers(1, timeout: 300)
        signIn.cancel()
        let error = await #expect(throws: ManagedSessionError.self) { try await signIn.value }
        #expect(error == .cancelled)
        #expect(rig.provider.session == nil)
        #expect(store.storedSession == nil)
    }
}
