import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// Runs `body`, failing instead of hanging when it takes longer than `seconds`.
private func withSafetyNet<T: Sendable>(
    _ seconds: Double = 300,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    // Not a task group, which would wait for a body that ignores cancellation (see the OAuth 2.0
    // tests' `withSafetyNet`).
    let outcome = ConcurrencySafeContainer<CheckedContinuation<T, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        outcome.withLock { $0 = continuation }
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0.take() }?.resume(with: result)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard let continuation = outcome.withLock({ $0.take() }) else { return }
            task.cancel()
            continuation.resume(throwing: CancellationError())
        }
    }
}

private struct AppReason: Error {}

/// What the observer says of a sign-out: whether a session ended with it.
@Suite struct ManagerSignOutObservationTests {

    private static func signOutBeforeTheLaunch(error: (any Error)?) async throws -> [Bool] {
        let observer = RecordingObserver()
        let clock = ManualClock()
        // Nobody signed in: an empty store, and no handle yet (the launch has not run).
        let provider = ManagedSessionProvider(
            store: MockSessionStore(session: nil),
            remote: InProcessAuthorizationServer(clock: clock),
            clock: clock,
            configuration: .init(checksCredentialState: false, observer: observer)
        )
        try provider.signout(with: error)
        try await withSafetyNet { await provider.waitUntilIdle() }
        try await withSafetyNet { await provider.observationsDelivered() }
        return observer.observations.compactMap { observation -> Bool? in
            if case .signedOut(_, let wasSignedIn) = observation { return wasSignedIn }
            return nil
        }
    }

    @Test("a sign-out with nobody signed in, before the launch: nobody was signed in")
    func voluntarySignOutBeforeTheLaunch() async throws {
        #expect(try await Self.signOutBeforeTheLaunch(error: nil) == [false])
    }

    @Test("a sign-out with the app's reason, nobody signed in, before the launch: nobody was signed in")
    func signOutWithAReasonBeforeTheLaunch() async throws {
        #expect(try await Self.signOutBeforeTheLaunch(error: AppReason()) == [false])
    }
}

/// A server that reissues the same access token at every sign-in, and whose refreshes fail
/// while `refreshDown` is set.
final class SameAccessTokenRemote: RemoteAuthService, Sendable {
    let refreshDown = ConcurrencySafeContainer(true)
    let refreshes = ConcurrencySafeContainer(0)
    private let counter = ConcurrencySafeContainer(0)

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        let number = counter.withLock {
            $0 += 1
            return $0
        }
        return IssuedTokens(
            accessToken: "same-access-token-of-alice",
            refreshToken: "refresh-\(number)-of-alice",
            expiresIn: 3600,
            user: ManagedUser(identifier: "alice", name: "Alice")
        )
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        refreshes.withLock { $0 += 1 }
        if refreshDown.withLock({ $0 }) { throw RemoteAuthError(.httpStatus(503), statusCode: 503) }
        let number = counter.withLock {
            $0 += 1
            return $0
        }
        return IssuedTokens(
            accessToken: "access-\(number)-of-alice",
            refreshToken: "refresh-\(number)-of-alice",
            expiresIn: 3600
        )
    }

    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {}

    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        .authorized
    }
}

/// The backoff that keeps rejections of a token whose refresh just failed from hammering the
/// server belongs to that session only.
@Suite struct RejectionBackoffLifetimeTests {

    @Test("a failed refresh's backoff ends with its session: a new sign-in's rejection refreshes")
    func backoffEndsWithTheSession() async throws {
        let remote = SameAccessTokenRemote()
        let provider = ObservedManager(remote: { _, _ in remote }).provider
        let first = try await provider.signIn(with: .password(username: "alice", password: alicePassword))
        // The API rejects the token; its refresh fails (503): the backoff starts.
        await #expect(throws: ManagedSessionError.self) {
            try await withSafetyNet { try await provider.refresh(ifAccessTokenIs: first.accessToken) }
        }
        // The person signs out and in again, the server is back, and it issues the same token.
        try provider.signout(with: nil)
        remote.refreshDown.withLock { $0 = false }
        let second = try await provider.signIn(with: .password(username: "alice", password: alicePassword))
        #expect(second.accessToken == first.accessToken)
        let before = remote.refreshes.withLock { $0 }

        let refreshed = try await withSafetyNet { try await provider.refresh(ifAccessTokenIs: second.accessToken) }

        #expect(remote.refreshes.withLock { $0 } == before + 1)
        #expect(refreshed.accessToken != second.accessToken)
    }
}
