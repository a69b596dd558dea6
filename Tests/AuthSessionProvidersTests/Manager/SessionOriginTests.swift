import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The in-process server as a backend configured for `origin`: the same tokens, named as a given
/// client's at a given issuer.
private struct ConfiguredRemote: RemoteAuthService {
    let server: InProcessAuthorizationServer
    let origin: SessionOrigin?

    var sessionOrigin: SessionOrigin? { origin }

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        try await server.obtainTokens(with: grant)
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        try await server.refresh(refreshToken, scope: scope)
    }

    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        try await server.revoke(token, kind: kind)
    }

    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        try await server.credentialState(for: session)
    }
}

private let appClient = SessionOrigin(issuer: "https://id.example.com", clientID: "app")
private let otherClient = SessionOrigin(issuer: "https://id.example.com", clientID: "app-v2")
private let otherIssuer = SessionOrigin(issuer: "https://staging.example.com", clientID: "app")

/// A launch: a manager over `store` and `server` configured for `origin`, started by its handle.
private final class Launch: Sendable {
    let provider: ManagedSessionProvider
    let handle: AuthSessionHandle<ManagedSessionProvider>
    let observer = RecordingObserver()
    let recorder = RecordingAuthSessionDelegate()

    init(
        store: any SessionStore,
        server: InProcessAuthorizationServer,
        origin: SessionOrigin?,
        clock: ManualClock
    ) {
        provider = ManagedSessionProvider(
            store: store,
            remote: ConfiguredRemote(server: server, origin: origin),
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                backgroundTask: nil,
                observer: observer
            )
        )
        handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        handle.subscribeDelegate(recorder, receive: recorder.queue)
    }

    func settle() async {
        await provider.waitUntilLaunchSettled()
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        await recorder.drain()
    }
}

@Suite("A session records the client and issuer it was issued to")
struct SessionOriginTests {

    @Test(
        "a stored session issued to another client: the launch neither sends its refresh token nor deletes it, and the app hears issuedToAnotherClient"
    )
    func anotherClientAtLaunch() async throws {
        for configured in [otherClient, otherIssuer] {
            let clock = ManualClock()
            let server = InProcessAuthorizationServer(clock: clock)
            server.register(alice, password: alicePassword)
            var stored = try await issuedSession(by: server, at: clock)
            stored.origin = appClient
            // Due: a manager that used it would refresh it at once.
            stored.expiresAt = clock.now.timeIntervalSince1970 + 10
            let store = MockSessionStore(session: stored)

            let launch = Launch(store: store, server: server, origin: configured, clock: clock)
            await launch.settle()

            #expect(server.refreshCount == 0, "its refresh token was sent with another configuration")
            #expect(launch.provider.session == nil)
            #expect(launch.handle.sessionStatus == .signedOut)
            #expect(store.storedSession == stored, "the other configuration's session was touched")
            let expected = SessionStoreError.issuedToAnotherClient(stored: appClient, configured: configured)
            #expect(
                launch.observer.observations.contains { observation in
                    if case .storeFailed(let error, .launch) = observation { return error == expected }
                    return false
                },
                "\(launch.observer.lines)"
            )
            #expect(expected.problem == .appMisconfigured)
            #expect(!ManagedSessionError.storage(expected).endsSession)
        }
    }

    @Test(
        "a sign-in records the backend's origin, a refresh keeps it, and a relaunch with the same configuration (or one that names no issuer) restores the session"
    )
    func recordedAndKept() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let first = Launch(store: store, server: server, origin: appClient, clock: clock)
        await first.settle()
        let signedIn = try await first.provider.signIn(
            with: .password(username: alice.identifier, password: alicePassword)
        )
        #expect(signedIn.origin == appClient)
        let refreshed = try await first.provider.refresh()
        #expect(refreshed.origin == appClient)
        let text = String(decoding: try Data(contentsOf: store.fileURL), as: UTF8.self)
        #expect(text.contains(#""issued_to":{"client_id":"app","issuer":"https:\/\/id.example.com"}"#), "\(text.count)")
        await first.settle()

        for configured in [appClient, SessionOrigin(issuer: nil, clientID: "app")] {
            let again = Launch(store: store, server: server, origin: configured, clock: clock)
            await again.settle()
            #expect(again.provider.session == refreshed, "restored under \(configured)")
        }
    }

    @Test(
        "a session stored before origins were kept is used, and its first refresh records the origin"
    )
    func olderSessionGainsItsOrigin() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let stored = try await issuedSession(by: server, at: clock)
        #expect(stored.origin == nil)
        let store = MockSessionStore(session: stored)
        let launch = Launch(store: store, server: server, origin: appClient, clock: clock)
        await launch.settle()
        #expect(launch.provider.session == stored)
        _ = try await launch.provider.refresh()
        #expect(store.storedSession?.origin == appClient)
    }

    @Test(
        "processes of two configurations share a store: a launch does not use the other's session, and a process signed in signs out as signed out elsewhere when the other signs in, never refreshing the other's tokens"
    )
    func anotherConfigurationSignsInElsewhere() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        func store() -> FileSessionStore { FileSessionStore(directory: folder.url, synchronizesWrites: false) }

        // A process of another configuration signs in.
        let other = Launch(store: store(), server: server, origin: otherClient, clock: clock)
        await other.settle()
        _ = try await other.provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        await other.settle()
        let launched = Launch(store: store(), server: server, origin: appClient, clock: clock)
        await launched.settle()
        #expect(launched.provider.session == nil, "a launch used the other client's session")

        // A sign-in here replaces it: the other process signs out as signed out elsewhere.
        let ours = try await launched.provider.signIn(
            with: .password(username: alice.identifier, password: alicePassword)
        )
        try await waitUntil(timeout: 300) { other.provider.session == nil }
        await other.settle()
        #expect(
            other.observer.lines.contains { $0.contains("signedOutElsewhere") },
            "\(other.observer.lines)"
        )
        let refreshesBefore = server.refreshCount
        _ = try? await other.provider.refresh()
        #expect(server.refreshCount == refreshesBefore, "a refresh sent the app client's token")
        #expect(try store().load() == ours, "the app client's session was removed")
    }

    @Test("a pending revocation of another client's token is left for that client, not sent")
    func pendingRevocationOfAnotherClient() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let now = clock.now.timeIntervalSince1970
        let theirs = PendingRevocation(
            token: "r-other",
            kind: .refreshToken,
            recordedAt: now,
            notAfter: now + 3600,
            origin: otherClient
        )
        let ours = PendingRevocation(token: "r-ours", kind: .refreshToken, recordedAt: now, notAfter: now + 3600)
        let store = MockSessionStore()
        try store.savePendingRevocations([theirs, ours])
        let launch = Launch(store: store, server: server, origin: appClient, clock: clock)
        await launch.settle()
        let remaining = await launch.provider.revokePendingTokens()
        #expect(server.revokedTokens == ["r-ours"])
        #expect(remaining == 1)
        #expect(store.pendingRevocations.map(\.token) == ["r-other"])
    }

    @Test("the origin is stored in the file, read by both decoders alike, and never read from version 1")
    func format() throws {
        var session = ManagedSession(
            accessToken: "a",
            refreshToken: "r",
            expiresAt: 2e9,
            issuedAt: 1e9,
            user: alice,
            lineage: "l",
            origin: appClient
        )
        let bytes = SessionFormat.encode(session)
        #expect(SessionFormatScanner.session(in: bytes) == session)
        guard case .session(let decoded) = SessionFormat.decodeWithJSONDecoder(bytes) else {
            Issue.record("not decoded")
            return
        }
        #expect(decoded == session)
        session.origin = SessionOrigin(issuer: nil, clientID: "app")
        #expect(SessionFormatScanner.session(in: SessionFormat.encode(session)) == session)

        let version1 = String(decoding: bytes, as: UTF8.self)
            .replacingOccurrences(of: #""version":2"#, with: #""version":1"#)
        guard case .session(let old) = SessionFormat.decode(Data(version1.utf8)) else {
            Issue.record("version 1 not decoded")
            return
        }
        #expect(old.origin == nil)
        #expect(SessionFormatScanner.session(in: Data(version1.utf8))?.origin == nil)
    }

    @Test("compatibility: the same client, and the same issuer when both name one")
    func compatibility() {
        #expect(appClient.isCompatible(with: appClient))
        #expect(!appClient.isCompatible(with: otherClient))
        #expect(!appClient.isCompatible(with: otherIssuer))
        #expect(appClient.isCompatible(with: SessionOrigin(issuer: nil, clientID: "app")))
        #expect(!SessionOrigin(issuer: nil, clientID: "app").isCompatible(with: otherClient))
        let detail = SessionStoreError.issuedToAnotherClient(stored: appClient, configured: otherClient).description
        #expect(detail.contains(#"client "app" at https://id.example.com"#), "\(detail)")
        #expect(detail.contains(#"client "app-v2""#), "\(detail)")
    }
}
