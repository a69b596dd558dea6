import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// What a process does when another process changed the shared store during its own work: it
/// never removes or overwrites what the other stored, and never presents a spent token.
@Suite("Processes sharing a store: another process changes the store during this one's work")
struct SharedStoreConflictTests {

    // "Honest limits" (c): "A process that notices never removes what the store holds: it
    // may be another user's session, signed in meanwhile."
    @Test(
        "a terminal refresh answer in one process leaves the session another process signed in meanwhile"
    )
    func terminalRefreshKeepsAnotherProcessesSignIn() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        // A presents the refresh token; the server holds its answer.
        server.holdsRefreshes = true
        let refreshA = Task { try await processA.provider.refresh() }
        try await server.waitForHeldRefreshes(1)
        // Meanwhile B signs out (revoking the family A presented) and signs in as Bob.
        try processB.provider.signout()
        await processB.provider.waitUntilIdle()
        try await processB.provider.signIn(with: advGrant(advBob))
        #expect(store.storedSession?.user.identifier == advBob.identifier)
        // A's refresh comes back invalid_grant: terminal for A.
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        _ = await refreshA.result
        await processA.provider.waitUntilIdle()

        #expect(processA.provider.session == nil, "A's own session is over: that part is right")
        #expect(
            store.storedSession?.user.identifier == advBob.identifier,
            "A removed Bob's freshly stored session: store.remove() on a terminal answer without checking what the store holds"
        )
        // B finds out at its next refresh: signed out although nobody signed Bob out.
        _ = try? await processB.provider.refresh()
        #expect(processB.provider.session?.user.identifier == advBob.identifier)
    }

    // "Honest limits" (c): "[the next refresh] finds the store empty or holding another
    // user's session and signs out with .signedOutElsewhere (if the same user signed in again there,
    // it adopts that session)".
    @Test(
        "the same user signing in again in another process during a refresh is adopted, not signed out"
    )
    func sameUserSignInElsewhereDuringRefreshIsAdopted() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        server.holdsRefreshes = true
        let refreshA = Task { try await processA.provider.refresh() }
        try await server.waitForHeldRefreshes(1)
        let again = try await processB.provider.signIn(with: advGrant(advAda))  // Ada again, a new family
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        _ = await refreshA.result
        await processA.provider.waitUntilIdle()

        #expect(processA.log.signOutErrors.isEmpty, "A signed out: \(processA.log.signOutErrors)")
        let adopted = processA.provider.session?.refreshToken == again.refreshToken
        #expect(adopted, "A did not adopt Ada's new session from the store")
    }

    // "Honest limits" (c): "A process that notices never removes what the store holds: it
    // may be another user's session, signed in meanwhile." Overwriting it is worse than removing it.
    @Test("the retried write after a failed one never overwrites the session another process signed in meanwhile")
    func rewriteKeepsAnotherProcessesSignIn() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        store.failsWrites = true
        _ = try await processA.provider.refresh()  // rotated; the write failed; retried in 2 s
        store.failsWrites = false
        try await processB.provider.signIn(with: advGrant(advBob))
        #expect(store.storedSession?.user.identifier == advBob.identifier)
        clock.advance(by: 2)  // A's retry
        await processA.provider.waitUntilIdle()

        #expect(store.storedSession?.user.identifier == advBob.identifier, "A wrote Ada's session over Bob's")
        _ = try? await processB.provider.refresh()
        #expect(processB.provider.session?.user.identifier == advBob.identifier, "B lost Bob's session")
    }

    // the documentation: "processes sharing a FileSessionStore take its exclusive lock, reload, and adopt a
    // rotation another process already made instead of presenting the spent token"; "The
    // biometric setting, stored with the session, so it survives relaunches and refreshes".
    @Test(
        "setBioMetricAuthentication in one process never writes its stale tokens over another process's rotation: no spent refresh token is presented, the family lives"
    )
    func biometricSettingKeepsAnotherProcessesRotation() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        let rotated = try await processB.provider.refresh()  // the store now holds rt2
        #expect(store.storedSession?.refreshToken == rotated.refreshToken)
        processA.provider.setBioMetricAuthentication(true)  // A saves its runtime session: rt1
        let storeKeepsTheRotation = store.storedSession?.refreshToken == rotated.refreshToken
        #expect(storeKeepsTheRotation, "A wrote the spent refresh token over B's rotation")
        _ = try? await processA.provider.refresh()
        _ = try? await processB.provider.refresh()
        await processA.provider.waitUntilIdle()
        await processB.provider.waitUntilIdle()

        let spentPresentations = server.presentedAfterAnsweredRotation.count
        #expect(spentPresentations == 0, "a refresh token was presented after its rotation was answered")
        #expect(processA.provider.session != nil, "A was signed out by reuse detection")
        #expect(processB.provider.session != nil, "B was signed out")
        #expect(server.liveFamilyCount == 1, "the family was revoked for reuse")
    }

    @Test("a refresh in another process keeps the biometric setting this process stored")
    func biometricSettingSurvivesAnotherProcessesRefresh() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        processA.provider.setBioMetricAuthentication(true)
        #expect(store.storedSession?.isBiometricAuthenticationEnabled == true)
        try await processB.provider.refresh()  // B read the store (bio on) but writes its runtime flag (off)

        #expect(store.storedSession?.isBiometricAuthenticationEnabled == true, "the biometric setting was lost")
        let relaunch = advRig(store: store, server: server, clock: clock)
        #expect(relaunch.provider.isBioMetricAuthenticationEnabled, "the next launch does not gate the session")
    }

    // "Honest limits" (c): "A process that notices never removes what the store holds"; the
    // biometric setting wrote the runtime session over another user's, or into an emptied store.
    @Test("the biometric setting never overwrites another user's session, nor writes into a store signed out of")
    func biometricSettingRespectsOtherProcesses() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore()
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)
        try await processA.provider.signIn(with: advGrant(advAda))
        let bobsSession = try await processB.provider.signIn(with: advGrant(advBob))

        processA.provider.setBioMetricAuthentication(true)
        #expect(store.storedSession == bobsSession, "A wrote its user over B's")
        #expect(
            processA.log.count {
                if case .unexpectedError(.userUpdateFailure(let error)) = $0 {
                    return error as? ManagedSessionError == .signedOutElsewhere
                }
                return false
            } == 1,
            "the refused write is reported"
        )

        try processB.provider.signout()
        processA.provider.setBioMetricAuthentication(true)
        #expect(store.storedSession == nil, "A wrote a session back into a store B signed out of")
        #expect(!processA.provider.isBioMetricAuthenticationEnabled, "the setting stays as it was")
    }

    // "Honest limits" (c): "if the same user signed in again there, it adopts that session". The
    // manager's own sign-out (expiry without a refresh token) removed the other process's session.
    @Test("a session without a refresh token that expires leaves the same user's newer session in the store")
    func expirySignOutKeepsAnotherProcesssSession() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.stripsRefreshTokens = true
        let store = MockSessionStore()
        let processA = advRig(store: store, server: server, clock: clock, remote: remote)
        let processB = advRig(store: store, server: server, clock: clock, remote: remote)
        try await processA.provider.signIn(with: advGrant(advAda))
        clock.advance(by: 3_000)
        let newer = try await processB.provider.signIn(with: advGrant(advAda))

        clock.advance(by: 601)  // past A's expiry, well before B's
        await processA.provider.waitUntilIdle()

        #expect(processA.provider.session == nil, "A's spent session ends")
        #expect(processA.log.signOutErrors == [.refreshUnavailable])
        #expect(store.storedSession == newer, "A removed B's newer session of the same user")
    }
}
