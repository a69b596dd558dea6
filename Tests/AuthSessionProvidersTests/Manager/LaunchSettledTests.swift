import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// A fresh folder for a file store, removed by the caller.
private func temporaryFolder() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("launch-settled-\(UUID().uuidString)")
}

@Suite("A command-line tool's wait for the launch: after it, the launch's refresh is over and the handle settled")
struct LaunchSettledTests {

    @Test("the README's command-line recipe: a stored session that is due is refreshed before the wait returns")
    func readmeRecipeWaitsForTheLaunchRefresh() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        try FileSessionStore(directory: folder).save(stored)
        clock.advance(by: 3600 - 30)  // due: the launch refreshes it
        // The server answers the refresh once it has it: a network round trip.
        server.holdsRefreshes = true
        let answering = Task {
            try await server.waitForHeldRefreshes(1, timeout: 300)
            server.holdsRefreshes = false
            server.releaseHeldRefreshes()
        }

        // The README, literally.
        let store = FileSessionStore(directory: folder)
        let provider = ManagedSessionProvider(store: store, remote: server, clock: clock)
        let handle = AuthSessionHandle(sessionProvider: provider)
        await handle.waitUntilLaunchSettled()

        #expect(handle.sessionStatus == .signedIn, "the launch is still refreshing: \(handle.sessionStatus)")
        let session = try #require(provider.session)
        #expect(session.accessToken != stored.accessToken, "provider.session is the refreshed one")
        #expect(session.refreshToken != stored.refreshToken)
        #expect(try store.load() == session, "and it is stored")
        #expect(server.refreshCount == 1)
        try await answering.value
    }

    @Test(
        "the old recipe, the handle's waitUntilIdle(), returns while the launch refreshes: it is not the launch's wait"
    )
    func handleIdleIsNotTheLaunch() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        clock.advance(by: 3600 - 30)
        server.holdsRefreshes = true
        let provider = ManagedSessionProvider(store: MockSessionStore(session: stored), remote: server, clock: clock)
        let handle = AuthSessionHandle(sessionProvider: provider)
        await handle.waitUntilIdle()
        #expect(handle.sessionStatus == .syncing, "the handle applied fetchingSession; the refresh is held")
        try await server.waitForHeldRefreshes(1, timeout: 300)
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        await handle.waitUntilLaunchSettled()
        #expect(handle.sessionStatus == .signedIn)
        #expect(provider.session?.refreshToken != stored.refreshToken)
    }

    @Test("a launch refresh that ends the session: after the wait, signed out, and the observer heard it")
    func launchRefreshEndsTheSession() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        server.revokeAllSessions(of: alice.identifier)
        clock.advance(by: 3600 - 30)
        let observer = RecordingObserver()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(session: stored),
            remote: server,
            clock: clock,
            configuration: .init(observer: observer)
        )
        let handle = AuthSessionHandle(sessionProvider: provider)
        await handle.waitUntilLaunchSettled()
        #expect(handle.sessionStatus == .signedOut)
        #expect(provider.session == nil)
        #expect(observer.observations.map(\.name) == ["refreshStarted", "refreshFinished", "signedOut"])
    }

    @Test("called before a handle exists, it waits for the launch the handle starts")
    func calledBeforeTheHandle() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let provider = ManagedSessionProvider(
            store: MockSessionStore(session: stored),
            remote: server,
            clock: clock,
            configuration: .init(checksCredentialState: false)
        )
        let waiting = Task { await provider.waitUntilLaunchSettled() }
        try await waitUntil(timeout: 300) { provider.idleWaiterCount == 1 }
        let handle = AuthSessionHandle(sessionProvider: provider)
        await waiting.value
        #expect(provider.session == stored)
        await handle.waitUntilLaunchSettled()
        #expect(handle.sessionStatus == .signedIn)
    }

    @Test("a store that cannot be read: the wait returns (nothing hangs) with no session, still syncing")
    func unavailableStoreReturns() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let store = MockSessionStore(session: try await issuedSession(by: server, at: clock))
        store.isUnavailable = true
        let observer = RecordingObserver()
        let provider = ManagedSessionProvider(
            store: store,
            remote: server,
            clock: clock,
            configuration: .init(observer: observer)
        )
        let handle = AuthSessionHandle(sessionProvider: provider)
        await handle.waitUntilLaunchSettled()
        #expect(provider.session == nil)
        #expect(handle.sessionStatus == .syncing)
        #expect(observer.lines.first?.hasPrefix("storeFailed(launch") == true, "\(observer.lines)")

        store.isUnavailable = false
        provider.reloadStore()
        await handle.waitUntilLaunchSettled()
        #expect(handle.sessionStatus == .signedIn)
    }
}
