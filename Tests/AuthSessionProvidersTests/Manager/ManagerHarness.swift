import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The user every manager test signs in as.
let alice = ManagedUser(identifier: "alice", name: "Alice", email: "alice@example.com")
let alicePassword = "correct horse battery"
let bob = ManagedUser(identifier: "bob", name: "Bob", email: "bob@example.com")
let bobPassword = "tr0ub4dor and 3"

/// Retries at once (no backoff wait), so tests need not move the clock for them.
let immediateRetries = RetryPolicy(maximumRetries: 2, initialDelay: 0)

/// A manager on a manual clock, an in-process server and a scriptable store, with a handle and a
/// recorder subscribed right after the handle's creation.
final class ManagerHarness: Sendable {
    let clock: ManualClock
    let server: InProcessAuthorizationServer
    let store: MockSessionStore
    let activation = ManualActivationSignal()
    let revocationName = Notification.Name("test.credentialRevoked.\(UUID().uuidString)")
    let provider: ManagedSessionProvider
    let recorder = RecordingAuthSessionDelegate()
    /// The handle's prompt, which the test resolves by hand.
    let authenticator = MockBiometricAuthenticator()
    let handle: AuthSessionHandle<ManagedSessionProvider>

    /// - Parameters:
    ///   - stored: The session in the store at launch.
    ///   - store: The store; a fresh mock holding `stored` by default.
    ///   - server: The server; a fresh one on `clock` by default.
    ///   - clock: The clock.
    ///   - checksCredentialState: Whether the manager checks the credential.
    ///   - retryPolicy: The manager's retry policy.
    init(
        stored: ManagedSession? = nil,
        store: MockSessionStore? = nil,
        server: InProcessAuthorizationServer? = nil,
        clock: ManualClock = ManualClock(),
        checksCredentialState: Bool = false,
        retryPolicy: RetryPolicy = immediateRetries
    ) {
        self.clock = clock
        let server = server ?? InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        server.register(bob, password: bobPassword)
        self.server = server
        self.store = store ?? MockSessionStore(session: stored)
        provider = ManagedSessionProvider(
            store: self.store,
            remote: server,
            retryPolicy: retryPolicy,
            clock: clock,
            configuration: .init(
                checksCredentialState: checksCredentialState,
                activationSignal: activation,
                revocationSignal: NotificationCenterCredentialRevocationSignal(name: revocationName)
            )
        )
        handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: authenticator,
            activationSignal: activation,
            clock: clock
        )
        handle.subscribeDelegate(recorder, receive: recorder.queue)
    }

    /// Signs in as `user` through the manager.
    @discardableResult
    func signIn(_ user: ManagedUser = alice) async throws -> ManagedSession {
        try await provider.signIn(with: .password(username: user.identifier, password: password(of: user)))
    }

    /// Every recorded logout, with its error.
    var logouts: [AuthSessionDelegateEvent] {
        recorder.events.filter {
            if case .logout = $0 { return true }
            return false
        }
    }

    /// Waits until the manager and the handle have nothing in flight and the recorder has
    /// everything delivered.
    func settle() async {
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        await recorder.drain()
    }
}

func password(of user: ManagedUser) -> String {
    user.identifier == bob.identifier ? bobPassword : alicePassword
}

/// A session `server` issued for `user` at `clock`'s time: what a store holds after a sign-in.
func issuedSession(
    by server: InProcessAuthorizationServer,
    for user: ManagedUser = alice,
    at clock: ManualClock
) async throws -> ManagedSession {
    server.register(user, password: password(of: user))
    let tokens = try await server.obtainTokens(with: .password(username: user.identifier, password: password(of: user)))
    return storedSession(from: tokens, for: user, at: clock)
}

/// The session a store holds for `tokens` issued to `user` at `clock`'s time.
func storedSession(from tokens: IssuedTokens, for user: ManagedUser, at clock: ManualClock) -> ManagedSession {
    let now = clock.now.timeIntervalSince1970
    return ManagedSession(
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        tokenType: tokens.tokenType,
        expiresAt: now + (tokens.expiresIn ?? 3600),
        issuedAt: now,
        user: tokens.user ?? user
    )
}

/// Waits until `condition` holds, yielding between looks; fails after `timeout` seconds (a safety
/// net: the condition is what the test waits on).
func waitUntil(
    timeout: TimeInterval = 300,
    _ condition: @Sendable () -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("the condition did not hold within \(timeout) s", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        await Task.yield()
    }
}

/// A server whose sign-ins take `delay` seconds on `clock`; everything else goes straight to
/// `server`.
struct SlowSignInRemote: RemoteAuthService {
    let server: InProcessAuthorizationServer
    let clock: ManualClock
    let delay: TimeInterval

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        do {
            try await clock.sleep(for: delay)
        } catch {
            throw RemoteAuthError(.cancelled)
        }
        return try await server.obtainTokens(with: grant)
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

/// A server whose credential checks always answer `verdict`; everything else goes to `server`.
struct FixedVerdictRemote: RemoteAuthService {
    let server: InProcessAuthorizationServer
    let verdict: CredentialState

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
        verdict
    }
}
