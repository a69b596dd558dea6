import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// A store that is locked or found corrupt, at launch or while the manager works.
@Suite("A locked or corrupt store")
struct ManagerStoreFailureTests {

    // the documentation: "A signed-out user coming back" is a bug the manager saves apps from; "A store that
    // cannot be read yet (a Keychain before the device's first unlock) ... is tried again". A pushed
    // revocation typically arrives in the background, on a locked device.
    @Test(
        "a sign-out while the store is locked is retried once it opens: the next launch does not restore the signed-out user"
    )
    func signOutWhileLockedIsRetried() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)

        store.isUnavailable = true
        rig.provider.handleCredentialRevocation()  // a push while the device is locked
        #expect(rig.provider.session == nil, "signed out in memory: right")
        store.isUnavailable = false
        rig.activation.fire()  // the device is unlocked, the app comes back
        clock.advance(by: 120)
        await rig.provider.waitUntilIdle()

        #expect(store.storedSession == nil, "the stored session was never removed")
        let relaunch = advRig(store: store, server: server, clock: clock)
        #expect(relaunch.provider.session == nil, "the revoked user is signed in again at the next launch")
    }

    // "Calls, configuration and errors", errors table: `.signedOutElsewhere` "Another process sharing the store signed out,
    // or signed in as someone else"; `.storage` "From a refresh: the session stands".
    @Test(
        "a store found corrupt during a refresh gets the session written back: no later refresh signs out with signedOutElsewhere"
    )
    func runtimeCorruptStoreKeepsTheSession() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)

        store.corruptNextLoad()  // the bytes are set aside by the load inside the refresh
        _ = try await rig.provider.refresh()  // the session is written back, then refreshed
        #expect(store.storedSession == rig.provider.session, "written back and refreshed")
        _ = try? await rig.provider.refresh()
        await rig.provider.waitUntilIdle()

        #expect(rig.provider.session != nil, "signed out: \(rig.log.signOutErrors)")
        #expect(!rig.log.signOutErrors.contains(.signedOutElsewhere), "no other process exists")
    }

    @Test("a locked store at launch keeps loading, deletes nothing, and signs in once unlocked")
    func lockedStoreAtLaunch() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let stored = try await advIssued(server, advAda, clock)
        let store = MockSessionStore(session: stored)
        store.isUnavailable = true
        let rig = advRig(store: store, server: server, clock: clock)
        for _ in 0..<5 {
            try await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
            await rig.provider.waitUntilIdle()
        }
        rig.activation.fire()
        #expect(rig.log.signOutCount == 0)
        #expect(store.removeCount == 0)
        #expect(rig.provider.session == nil)
        store.isUnavailable = false
        rig.activation.fire()
        await rig.provider.waitUntilIdle()
        #expect(rig.provider.session == stored)
        #expect(rig.log.count { if case .sessionFetched(true) = $0 { true } else { false } } == 1)
    }

    @Test("a store locked while a rotation is answered keeps the new tokens, signs nobody out, and heals")
    func storeLockedDuringCommit() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        server.holdsRefreshes = true
        let refresh = Task { try await rig.provider.refresh() }
        try await server.waitForHeldRefreshes(1)
        store.isUnavailable = true
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        let refreshed = try await refresh.value
        #expect(rig.provider.session?.refreshToken == refreshed.refreshToken)
        #expect(rig.log.signOutCount == 0)
        store.isUnavailable = false
        clock.advance(by: 2)
        await rig.provider.waitUntilIdle()
        #expect(store.storedSession?.refreshToken == refreshed.refreshToken)
        _ = try await rig.provider.refresh()
        #expect(server.duplicatePresentations.isEmpty)
    }

    // the documentation: "a refresh … that started in an older one changes nothing, stored or published". The
    // write-back of a session found corrupt ran after a sign-out and restored the signed-out user.
    @Test("a sign-out while a refresh writes back a session found corrupt: nothing is written back")
    func corruptWriteBackAfterSignOut() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let inner = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let store = AdvCorruptPauseStore(inner)
        let rig = advRig(store: store, server: server, clock: clock)
        #expect(rig.provider.session != nil)

        store.arm()
        let refresh = Task { try await rig.provider.refresh() }
        #expect(await advEventually(timeout: 300) { store.isPaused }, "the refresh reached its load")
        try rig.provider.signout()
        store.release()
        _ = try? await refresh.value
        await rig.provider.waitUntilIdle()

        #expect(inner.storedSession == nil, "the signed-out session was written back")
        #expect(rig.provider.session == nil)
        #expect(server.refreshLog.isEmpty, "nothing presented for a signed-out session")
    }
}
