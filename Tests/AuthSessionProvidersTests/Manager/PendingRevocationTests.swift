import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// A manager over `store`, with an observer: a launch of the app.
private func launch(
    store: any SessionStore,
    server: InProcessAuthorizationServer,
    clock: ManualClock,
    observer: RecordingObserver,
    activation: ManualActivationSignal = ManualActivationSignal(),
    revocationLifetime: TimeInterval? = nil
) async -> ManagedSessionProvider {
    var configuration = ManagedSessionProvider.Configuration(
        checksCredentialState: false,
        activationSignal: activation,
        observer: observer
    )
    if let revocationLifetime { configuration.pendingRevocationLifetime = revocationLifetime }
    let provider = ManagedSessionProvider(
        store: store,
        remote: server,
        retryPolicy: immediateRetries,
        clock: clock,
        configuration: configuration
    )
    // The handle starts the manager: the launch reads the store.
    let handle = AuthSessionHandle(
        sessionProvider: provider,
        biometricAuthenticator: MockBiometricAuthenticator(),
        activationSignal: ManualActivationSignal(),
        clock: clock
    )
    launchedHandles.withLock { $0.append(handle) }
    // The launch's own round of pending revocations is over.
    await provider.waitUntilIdle()
    return provider
}

/// The handles of the launches, kept for the test process's life (a handle keeps its manager
/// started).
private let launchedHandles = ConcurrencySafeContainer<[AuthSessionHandle<ManagedSessionProvider>]>([])

/// The revocation outcomes `observer` heard, as lines.
private func revocations(_ observer: RecordingObserver) -> [String] {
    observer.observations.compactMap {
        if case .revocation = $0 { return $0.description }
        return nil
    }
}

@Suite("A revocation the server did not hear is made later")
struct PendingRevocationTests {

    @Test(
        "a sign-out while the server is down: the refresh token is revoked at the next launch, once the server is back"
    )
    func signOutOfflineRevokesAtNextLaunch() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = MockSessionStore()
        let firstObserver = RecordingObserver()
        let first = await launch(store: store, server: server, clock: clock, observer: firstObserver)
        let session = try await first.signIn(with: .password(username: alice.identifier, password: alicePassword))
        let refreshToken = try #require(session.refreshToken)

        server.enqueueRevocationFaults([.unavailable])
        try first.signout(with: nil)
        await first.waitUntilIdle()
        await first.observationsDelivered()
        #expect(!server.revokedTokens.contains(refreshToken), "the server was down")
        #expect(store.pendingRevocations.map(\.token) == [refreshToken], "kept in the store")
        #expect(
            revocations(firstObserver).contains(
                "revocation(refresh_token, pending(\(RemoteAuthError(.httpStatus(503), statusCode: 503))))"
            )
        )

        // The app quits; the next launch finds the server back.
        let nextObserver = RecordingObserver()
        let next = await launch(store: store, server: server, clock: clock, observer: nextObserver)
        await next.waitUntilIdle()
        await next.observationsDelivered()
        #expect(server.revokedTokens.contains(refreshToken))
        #expect(store.pendingRevocations.isEmpty)
        #expect(revocations(nextObserver) == ["revocation(refresh_token, revoked(retry))"])
        // The token is dead at the server.
        await #expect(throws: RemoteAuthError.self) { try await server.refresh(refreshToken, scope: nil) }
        #expect(await next.revokePendingTokens() == 0)
    }

    @Test("still unreachable: kept, tried again at each activation, and revokePendingTokens() says how many remain")
    func stillUnreachableIsKeptAndRetriedOnActivation() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = MockSessionStore()
        let observer = RecordingObserver()
        let activation = ManualActivationSignal()
        let provider = await launch(
            store: store,
            server: server,
            clock: clock,
            observer: observer,
            activation: activation
        )
        let session = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        // Down for the sign-out, the explicit round and the first activation.
        server.enqueueRevocationFaults([.unavailable, .unavailable, .unavailable])
        try provider.signout(with: nil)
        await provider.waitUntilIdle()
        #expect(await provider.revokePendingTokens() == 1, "still down")
        #expect(store.pendingRevocations.count == 1)

        activation.fire()
        await provider.waitUntilIdle()
        #expect(store.pendingRevocations.count == 1, "still down at this activation")
        activation.fire()
        await provider.waitUntilIdle()
        #expect(store.pendingRevocations.isEmpty, "revoked at the next")
        #expect(server.revokedTokens.contains(try #require(session.refreshToken)))
    }

    @Test("kept no longer than the token could be valid: given up, and said")
    func givenUpAfterItsLifetime() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = MockSessionStore()
        let observer = RecordingObserver()
        let first = await launch(
            store: store,
            server: server,
            clock: clock,
            observer: observer,
            revocationLifetime: 3_600
        )
        _ = try await first.signIn(with: .password(username: alice.identifier, password: alicePassword))
        server.enqueueRevocationFaults([.unavailable])
        try first.signout(with: nil)
        await first.waitUntilIdle()
        let revokedBefore = server.revokedTokens.count
        clock.advance(by: 3_601)
        let laterObserver = RecordingObserver()
        let later = await launch(store: store, server: server, clock: clock, observer: laterObserver)
        await later.waitUntilIdle()
        await later.observationsDelivered()
        #expect(revocations(laterObserver) == ["revocation(refresh_token, expired)"])
        #expect(store.pendingRevocations.isEmpty)
        #expect(server.revokedTokens.count == revokedBefore, "not sent")
    }

    @Test("refused for good (a misconfigured client): not made again, and said as an error")
    func refusedForGoodIsDropped() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = MockSessionStore()
        let observer = RecordingObserver()
        let provider = await launch(store: store, server: server, clock: clock, observer: observer)
        _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        server.enqueueRevocationFaults([.unavailable, .invalidClient])
        try provider.signout(with: nil)
        await provider.waitUntilIdle()
        #expect(await provider.revokePendingTokens() == 0)
        await provider.observationsDelivered()
        let failed = observer.observations.contains {
            if case .revocation(.refreshToken, .failed) = $0 { return $0.severity == .error }
            return false
        }
        #expect(failed, "\(revocations(observer))")
        #expect(store.pendingRevocations.isEmpty)
    }

    @Test(
        "with real files: the record is private, survives the process, holds nothing after the revocation, and no description shows its token"
    )
    func fileStoreKeepsItAcrossLaunches() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let first = await launch(
            store: FileSessionStore(directory: folder.url),
            server: server,
            clock: clock,
            observer: RecordingObserver()
        )
        let session = try await first.signIn(with: .password(username: alice.identifier, password: alicePassword))
        let refreshToken = try #require(session.refreshToken)
        server.enqueueRevocationFaults([.unavailable])
        try first.signout(with: nil)
        await first.waitUntilIdle()

        let record = folder.url.appendingPathComponent("session.json.revocations").path
        let attributes = try FileManager.default.attributesOfItem(atPath: record)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let pending = try FileSessionStore(directory: folder.url).loadPendingRevocations()
        #expect(pending.map(\.token) == [refreshToken])
        for record in pending {
            var dumped = ""
            dump(record, to: &dumped)
            for text in ["\(record)", String(reflecting: record), dumped] {
                #expect(!text.contains(refreshToken))
            }
        }

        let next = await launch(
            store: FileSessionStore(directory: folder.url),
            server: server,
            clock: clock,
            observer: RecordingObserver()
        )
        await next.waitUntilIdle()
        #expect(server.revokedTokens.contains(refreshToken))
        #expect(!FileManager.default.fileExists(atPath: record), "nothing left once revoked")
    }
}
