import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The in-process server as a backend configured for `origin`; its revocations can be made to
/// fail as a network failure would.
private struct OriginRemote: RemoteAuthService {
    let server: InProcessAuthorizationServer
    let origin: SessionOrigin?
    let revocationsFail: ConcurrencySafeContainer<Bool>
    /// Every token this backend was asked to revoke, and every refresh token presented to it.
    let sent: ConcurrencySafeContainer<[String]>

    init(server: InProcessAuthorizationServer, origin: SessionOrigin?, revocationsFail: Bool = false) {
        self.server = server
        self.origin = origin
        self.revocationsFail = ConcurrencySafeContainer(revocationsFail)
        self.sent = ConcurrencySafeContainer([])
    }

    var sessionOrigin: SessionOrigin? { origin }

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        try await server.obtainTokens(with: grant)
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        sent.withLock { $0.append(refreshToken) }
        return try await server.refresh(refreshToken, scope: scope)
    }

    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        sent.withLock { $0.append(token) }
        if revocationsFail.withLock({ $0 }) { throw RemoteAuthError(.network(code: -1009)) }
        try await server.revoke(token, kind: kind)
    }

    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        try await server.credentialState(for: session)
    }
}

private let production = SessionOrigin(issuer: "https://id.example.com", clientID: "app")
private let unnamedIssuer = SessionOrigin(issuer: nil, clientID: "app")
private let staging = SessionOrigin(issuer: "https://staging.example.com", clientID: "app")
private let otherClient = SessionOrigin(issuer: "https://id.example.com", clientID: "app-v2")

private func manager(
    store: any SessionStore,
    remote: OriginRemote,
    clock: ManualClock,
    observer: RecordingObserver = RecordingObserver()
) -> ManagedSessionProvider {
    ManagedSessionProvider(
        store: store,
        remote: remote,
        retryPolicy: immediateRetries,
        clock: clock,
        configuration: .init(
            checksCredentialState: false,
            activationSignal: ManualActivationSignal(),
            backgroundTask: nil,
            observer: observer
        )
    )
}

@Suite("Adversary27: a session's origin")
struct Adversary27OriginTests {

    @Test(
        "a sign-out before the launch read the store (no handle yet) never deletes a session issued to another client"
    )
    func earlySignOutKeepsAnotherClientsSession() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        var stored = try await issuedSession(by: server, at: clock)
        stored.origin = otherClient
        stored.lineage = "their-lineage"
        let store = MockSessionStore(session: stored)
        let remote = OriginRemote(server: server, origin: production)
        let provider = manager(store: store, remote: remote, clock: clock)
        // The app signs out before it creates its handle (a "sign out" command of a CLI, a reset).
        try? provider.signout(with: nil)
        await provider.waitUntilIdle()
        #expect(store.storedSession == stored, "another client's session was deleted by this manager")
        #expect(!remote.sent.withLock { $0 }.contains(stored.refreshToken ?? "-"), "its token was sent here")
    }

    @Test(
        "a pending revocation keeps the origin of the session it ended: a session issued at one issuer, signed out offline by a manager that names no issuer, is not sent to another issuer"
    )
    func pendingRevocationKeepsTheSessionsOrigin() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        var stored = try await issuedSession(by: server, at: clock)
        stored.origin = production
        stored.lineage = "l-1"
        let store = MockSessionStore(session: stored)

        // This version's configuration names no issuer: compatible, so it uses the session.
        let offline = OriginRemote(server: server, origin: unnamedIssuer, revocationsFail: true)
        let first = manager(store: store, remote: offline, clock: clock)
        let handle = AuthSessionHandle(
            sessionProvider: first,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        await first.waitUntilLaunchSettled()
        #expect(first.session?.refreshToken == stored.refreshToken)
        try first.signout(with: nil)
        await first.waitUntilIdle()
        try await waitUntil(timeout: 300) { !store.pendingRevocations.isEmpty }
        _ = handle

        // A manager configured for another issuer (a staging build sharing the store).
        let elsewhere = OriginRemote(server: server, origin: staging)
        let second = manager(store: store, remote: elsewhere, clock: clock)
        _ = await second.revokePendingTokens()
        #expect(
            !elsewhere.sent.withLock { $0 }.contains(stored.refreshToken ?? "-"),
            "the production refresh token was sent to the staging issuer: the record kept \(String(describing: store.pendingRevocations.first?.origin)), not the session's \(production)"
        )
    }

    @Test(
        "a session signed in by another client while this manager runs with its own: a refresh and a biometric change here neither send that client's token nor delete or rewrite its session"
    )
    func anotherClientSignsInWhileRunning() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = MockSessionStore()
        let remote = OriginRemote(server: server, origin: production)
        let provider = manager(store: store, remote: remote, clock: clock)
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        await provider.waitUntilLaunchSettled()
        _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        await provider.waitUntilIdle()

        // Another configuration signs the same person in, over the shared store.
        var theirs = try await issuedSession(by: server, at: clock)
        theirs.origin = otherClient
        theirs.lineage = "theirs"
        try store.save(theirs)

        _ = try? await provider.refresh()
        provider.setBioMetricAuthentication(true)
        await provider.waitUntilIdle()
        #expect(!remote.sent.withLock { $0 }.contains(theirs.refreshToken ?? "-"), "their refresh token was sent here")
        #expect(store.storedSession == theirs, "their session was deleted or rewritten")
        try? provider.signout(with: nil)
        await provider.waitUntilIdle()
        #expect(store.storedSession == theirs, "a sign-out here removed their session")
        #expect(
            !remote.sent.withLock { $0 }.contains(theirs.refreshToken ?? "-"),
            "their refresh token was revoked here"
        )
        _ = handle
    }

    // MARK: - The format

    private static func document(session extra: String, version: Int = 2) -> Data {
        Data(
            """
            {"format":"AuthSessionKit.session","version":\(version),"session":{"access_token":"a","biometric_authentication_enabled":false,"expires_at":2000000000,"issued_at":1000000000,"lineage":"l","refresh_token":"r","token_type":"Bearer","user":{"profile":{},"subject":"alice"}\(extra)}}
            """.utf8
        )
    }

    /// What a decode found, comparable.
    private static func summary(_ decoded: SessionFormat.Decoded) -> String {
        switch decoded {
        case .session(let session): "session(\(String(describing: session.origin)))"
        case .unsupportedVersion(let version): "unsupported(\(version))"
        case .corrupt: "corrupt"
        }
    }

    @Test(
        "hostile issued_to values: the scanner path and JSONDecoder agree, and a version 2 file without a usable origin is never mistaken for another origin",
        .disabled(if: isThreadSanitized, "pure computation, no thread to watch: plain swift test runs it")
    )
    func hostileIssuedTo() {
        let huge = String(repeating: "x", count: 200_000)
        let members = [
            #","issued_to":null"#,
            #","issued_to":5"#,
            #","issued_to":"app""#,
            #","issued_to":[]"#,
            #","issued_to":{}"#,
            #","issued_to":{"client_id":null}"#,
            #","issued_to":{"client_id":5}"#,
            #","issued_to":{"client_id":"app","issuer":null}"#,
            #","issued_to":{"client_id":"app","issuer":5}"#,
            #","issued_to":{"client_id":"app","client_id":"evil"}"#,
            #","issued_to":{"client_id":"app"},"issued_to":{"client_id":"evil"}"#,
            #","issued_to":{"client_id":"app","extra":{"nested":[1,2]}}"#,
            #","issued_to":{"client_id":"\u0061pp"}"#,
            #","issued_to":{"client_id":"app","issuer":"https:\/\/id.example.com"}"#,
            #","issued_to":{"client_id":""}"#,
            #","issued_to":{"client_id":"\#(huge)"}"#,
            #","issued_to":{"issuer":"https://id.example.com"}"#,
        ]
        for member in members {
            for version in [1, 2] {
                let data = Self.document(session: member, version: version)
                let viaScanner = Self.summary(SessionFormat.decode(data))
                let viaDecoder = Self.summary(SessionFormat.decodeWithJSONDecoder(data))
                #expect(viaScanner == viaDecoder, "v\(version) \(member.prefix(80)): \(viaScanner) vs \(viaDecoder)")
            }
        }
    }
}
