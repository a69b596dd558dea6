import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// README, `signout()`: "a revocation the server does not hear (offline) is kept and made again at
// the next launch or activation". Each "process" here is its own FileSessionStore instance over
// the same folder and its own manager: nothing shared in memory.

private let launched28b = ConcurrencySafeContainer<[AuthSessionHandle<ManagedSessionProvider>]>([])

/// Waits until `provider` is idle, at most `seconds` (a safety net); whether it became idle.
private func idle28b(_ provider: ManagedSessionProvider, _ seconds: Double = 15) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await provider.waitUntilIdle()
            return true
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// A launch of the app in a "process" of its own over the folder.
private func launch28b(
    _ folder: URL,
    server: InProcessAuthorizationServer,
    clock: ManualClock,
    activation: ManualActivationSignal = ManualActivationSignal()
) async -> ManagedSessionProvider {
    let provider = ManagedSessionProvider(
        store: FileSessionStore(directory: folder, synchronizesWrites: false),
        remote: server,
        retryPolicy: RetryPolicy(maximumRetries: 2, initialDelay: 0),
        clock: clock,
        configuration: .init(checksCredentialState: false, activationSignal: activation)
    )
    let handle = AuthSessionHandle(
        sessionProvider: provider,
        biometricAuthenticator: MockBiometricAuthenticator(),
        activationSignal: ManualActivationSignal(),
        clock: clock
    )
    launched28b.withLock { $0.append(handle) }
    #expect(await idle28b(provider), "the launch did not settle")
    return provider
}

private let user28b = ManagedUser(identifier: "carol28b", name: "Carol", email: "carol@example.com")
private let password28b = "adversary 28b password"

/// An earlier process: signs in, then signs out while the revocation endpoint is down.
/// Returns the refresh token left pending.
private func signOutOffline28b(
    _ folder: URL,
    server: InProcessAuthorizationServer,
    clock: ManualClock
) async throws -> String {
    let earlier = await launch28b(folder, server: server, clock: clock)
    let session = try await earlier.signIn(with: .password(username: user28b.identifier, password: password28b))
    let refreshToken = try #require(session.refreshToken)
    server.enqueueRevocationFaults([.unavailable])
    try earlier.signout(with: nil)
    #expect(await idle28b(earlier))
    #expect(!server.revokedTokens.contains(refreshToken))
    let pending = try FileSessionStore(directory: folder).loadPendingRevocations()
    #expect(pending.map(\.token) == [refreshToken], "the earlier process kept it in the store")
    return refreshToken
}

private func revocationsFile28b(_ folder: URL) -> String {
    folder.appendingPathComponent("session.json.revocations").path
}

@Suite("Adversary28b: a pending revocation left by an earlier process is made at the next launch", .serialized)
struct Adversary28bPendingRevocationTests {

    private func setUp() throws -> (TemporaryFolder, InProcessAuthorizationServer, ManualClock) {
        let folder = try TemporaryFolder()
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(user28b, password: password28b)
        return (folder, server, clock)
    }

    @Test("Adversary28b: the next launch (a new store instance, nothing in memory) revokes it")
    func nextLaunch() async throws {
        let (folder, server, clock) = try setUp()
        defer { folder.remove() }
        let token = try await signOutOffline28b(folder.url, server: server, clock: clock)
        let next = await launch28b(folder.url, server: server, clock: clock)
        #expect(await idle28b(next))
        #expect(server.revokedTokens.contains(token))
        #expect(!FileManager.default.fileExists(atPath: revocationsFile28b(folder.url)))
    }

    @Test(
        "Adversary28b: a manager launched before the offline sign-out (nothing pending then): the next launch still revokes it"
    )
    func launchedBeforeWithNothingPending() async throws {
        let (folder, server, clock) = try setUp()
        defer { folder.remove() }
        let bystander = await launch28b(folder.url, server: server, clock: clock)
        #expect(await bystander.revokePendingTokens() == 0)
        let token = try await signOutOffline28b(folder.url, server: server, clock: clock)
        #expect(await idle28b(bystander))
        let next = await launch28b(folder.url, server: server, clock: clock)
        #expect(await idle28b(next))
        #expect(server.revokedTokens.contains(token))
    }

    @Test("Adversary28b: a manager launched before the offline sign-out revokes it at its next activation")
    func launchedBeforeRevokesOnActivation() async throws {
        let (folder, server, clock) = try setUp()
        defer { folder.remove() }
        let activation = ManualActivationSignal()
        let bystander = await launch28b(folder.url, server: server, clock: clock, activation: activation)
        let token = try await signOutOffline28b(folder.url, server: server, clock: clock)
        #expect(await idle28b(bystander))
        activation.fire()
        #expect(await idle28b(bystander))
        #expect(server.revokedTokens.contains(token))
    }

    @Test("Adversary28b: the next launch finds another user's session stored since: still revokes it")
    func nextLaunchWithASessionStored() async throws {
        let (folder, server, clock) = try setUp()
        defer { folder.remove() }
        let token = try await signOutOffline28b(folder.url, server: server, clock: clock)
        let dave = ManagedUser(identifier: "dave28b")
        server.register(dave, password: "dave 28b password")
        let tokens = try await server.obtainTokens(
            with: .password(username: dave.identifier, password: "dave 28b password")
        )
        let now = clock.now.timeIntervalSince1970
        try FileSessionStore(directory: folder.url).save(
            ManagedSession(
                accessToken: tokens.accessToken,
                refreshToken: tokens.refreshToken,
                expiresAt: now + 3600,
                issuedAt: now,
                user: dave
            )
        )
        let next = await launch28b(folder.url, server: server, clock: clock)
        #expect(await idle28b(next))
        #expect(server.revokedTokens.contains(token))
    }

    @Test(
        "Adversary28b: the next launch finds the session file corrupt (set aside, signed out): still revokes the pending one",
        arguments: ["garbage", "newer format", "public file (mode 0644)"]
    )
    func nextLaunchWithUnreadableSession(kind: String) async throws {
        let (folder, server, clock) = try setUp()
        defer { folder.remove() }
        let token = try await signOutOffline28b(folder.url, server: server, clock: clock)
        let sessionPath = folder.path("session.json")
        let bytes =
            kind == "garbage"
            ? "not a session at all"
            : #"{"format":"AuthSessionKit.session","version":99,"session":{}}"#
        let descriptor = open(sessionPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        _ = bytes.withCString { write(descriptor, $0, strlen($0)) }
        close(descriptor)
        if kind.hasPrefix("public") { chmod(sessionPath, 0o644) }
        let activation = ManualActivationSignal()
        let next = await launch28b(folder.url, server: server, clock: clock, activation: activation)
        #expect(await idle28b(next))
        #expect(server.revokedTokens.contains(token), "\(kind): the pending revocation was not made at this launch")
        #expect(
            !FileManager.default.fileExists(atPath: revocationsFile28b(folder.url)),
            "\(kind): still pending after the launch"
        )
        // Characterization: the first activation of that process does make it.
        activation.fire()
        #expect(await idle28b(next))
        #expect(server.revokedTokens.contains(token), "\(kind): not made at the activation either")
    }
}
