import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

extension ManagerCredentialTests {

    // the documentation: "The credential check runs at every launch and at most every 5 minutes on
    // activation"; rule "Sign-in and sign-out start a new generation; a ... result from an older
    // one changes nothing".
    @Test(
        "a sign-in while the launch's credential check is out leaves later credential checks running"
    )
    func credentialChecksGoOnAfterSignInDuringACheck() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.holdsChecks = true
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock, remote: remote, checksCredentialState: true)
        #expect(await advEventually { remote.heldCheckCount == 1 }, "the launch's check is out")

        try await rig.provider.signIn(with: advGrant(advBob))  // a new generation while the check is out
        remote.releaseChecks()  // the old generation's answer is dropped
        await rig.provider.waitUntilIdle()
        let checksBefore = remote.checkCount

        server.revokeAllSessions(of: advBob.identifier)  // Bob's credential is revoked at the server
        clock.advance(by: 301)
        rig.activation.fire()
        await rig.provider.waitUntilIdle()

        #expect(remote.checkCount == checksBefore + 1, "an activation 5 minutes later did not check the credential")
        #expect(rig.provider.session == nil, "the revoked credential is never noticed by checks")
    }

    // the documentation: "A misconfiguration (invalid_client) is not retried in a loop: it blocks the
    // automatic refreshes (the timer, activations, validAccessToken())".
    @Test(
        "a misconfigured refresh is not retried on activations, even when the credential check's verdict asks for a refresh"
    )
    func misconfigurationNotRetriedThroughCredentialVerdicts() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        let rig = advRig(
            store: MockSessionStore(),
            server: server,
            clock: clock,
            remote: remote,
            checksCredentialState: true
        )
        try await rig.provider.signIn(with: advGrant(advAda))
        server.enqueueRefreshFaults(Array(repeating: .invalidClient, count: 10))
        await #expect(throws: ManagedSessionError.self) { try await rig.provider.refresh() }
        await rig.provider.waitUntilIdle()
        let blockedAt = server.refreshCount
        clock.advance(by: 1900)  // 1,700 s left: less than half the lifetime
        await #expect(throws: ManagedSessionError.self) {
            try await rig.provider.validAccessToken(minimumValidity: 3600)
        }
        #expect(server.refreshCount == blockedAt, "validAccessToken is blocked: right")

        remote.verdict = .notFound  // e.g. a token the server no longer knows
        for _ in 0..<3 {
            clock.advance(by: 301)
            rig.activation.fire()
            await rig.provider.waitUntilIdle()
        }
        #expect(
            server.refreshCount == blockedAt,
            "\(server.refreshCount - blockedAt) invalid_client refreshes from activations"
        )
    }

    // A released manager must not act: its launch credential check held it alive, and a verdict
    // arriving afterwards started a refresh or a sign-out for a manager nobody holds.
    @Test("a manager released while its credential check is out is gone at once")
    func releasedWhileCheckingCredential() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.holdsChecks = true
        remote.verdict = .revoked
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let isGone: @Sendable () -> Bool = await {
            let rig = advRig(store: store, server: server, clock: clock, remote: remote, checksCredentialState: true)
            #expect(await advEventually { remote.heldCheckCount == 1 }, "the launch check is out")
            return { [weak provider = rig.provider] in provider == nil }
        }()
        #expect(await advEventually(timeout: 300) { isGone() }, "the check keeps the released manager alive")
        remote.releaseChecks()
        #expect(store.storedSession != nil)
    }
}
