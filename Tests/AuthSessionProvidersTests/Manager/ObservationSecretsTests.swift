import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The in-process server, issuing an ID token with each sign-in, and answering a refresh (when
/// told) with an `error_description` that quotes the refresh token presented, as a careless
/// server does. Records every secret it issued or saw.
final class LeakyRemote: RemoteAuthService {
    let server: InProcessAuthorizationServer
    let leaksNextRefresh = ConcurrencySafeContainer(false)
    let secrets = ConcurrencySafeContainer<Set<String>>([])

    init(server: InProcessAuthorizationServer) { self.server = server }

    private func record(_ tokens: IssuedTokens) {
        secrets.withLock { $0.formUnion([tokens.accessToken, tokens.refreshToken, tokens.idToken].compactMap { $0 }) }
    }

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        secrets.withLock { $0.formUnion(grant.parameters.values) }
        var tokens = try await server.obtainTokens(with: grant)
        tokens.idToken =
            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9." + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        record(tokens)
        return tokens
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        secrets.withLock { _ = $0.insert(refreshToken) }
        if leaksNextRefresh.withLock({ state in
            defer { state = false }
            return state
        }) {
            throw RemoteAuthError(
                .server(code: "invalid_grant"),
                statusCode: 400,
                serverDescription: "refresh_token \(refreshToken) was revoked; token \(refreshToken)"
            )
        }
        let tokens = try await server.refresh(refreshToken, scope: scope)
        record(tokens)
        return tokens
    }

    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        try await server.revoke(token, kind: kind)
    }

    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        try await server.credentialState(for: session)
    }
}

@Suite("No secret in any observation: a scripted run's every token, code and password, scanned in every rendering")
struct ObservationSecretsTests {

    @Test("sign-in (password, code), refresh, rotation, retried failure, refused refresh, store failure, sign-out")
    func scriptedRun() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let remote = LeakyRemote(server: server)
        let store = MockSessionStore()
        let observer = RecordingObserver()
        let stderrLines = ConcurrencySafeContainer<[String]>([])
        let stderrAdapter = StandardErrorSessionObserver(minimumSeverity: .debug) { line in
            stderrLines.withLock { $0.append(line) }
        }
        let provider = ManagedSessionProvider(
            store: store,
            remote: remote,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(
                checksCredentialState: true,
                activationSignal: ManualActivationSignal(),
                observer: observer
            )
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        let wrongPassword = "wrong-" + UUID().uuidString
        remote.secrets.withLock { $0.formUnion([alicePassword, wrongPassword]) }

        _ = try? await provider.signIn(with: .password(username: "alice", password: wrongPassword))
        try await provider.signIn(with: .password(username: "alice", password: alicePassword))
        try await provider.refresh()  // a rotation
        server.enqueueRefreshFaults([.unavailable])
        try await provider.refresh()  // a retried transient failure
        let code = server.issueAuthorizationCode(for: alice)
        let verifier = "verifier-" + UUID().uuidString
        remote.secrets.withLock { $0.formUnion([code, verifier]) }
        try await provider.signIn(
            with: .authorizationCode(code, codeVerifier: verifier, redirectURI: URL(string: "app:/cb")!)
        )
        store.failsWrites = true
        _ = try? await provider.refresh()  // rotated, the write failed: kept unsaved
        store.failsWrites = false
        remote.leaksNextRefresh.withLock { $0 = true }
        _ = try? await provider.refresh()  // refused, quoting the token: signed out
        try await provider.signIn(with: .password(username: "alice", password: alicePassword))
        try provider.signout(with: nil)
        await provider.waitUntilIdle()
        await provider.observationsDelivered()
        _ = handle

        let secrets = remote.secrets.withLock { $0 }.filter { $0.count >= 6 }
        #expect(secrets.count >= 12, "every token, code and password of the run: \(secrets.count)")
        let observations = observer.observations
        #expect(observations.count >= 15)
        // The run went where the script says.
        #expect(observer.lines.contains { $0.hasPrefix("signedOut(endedByServer(") })
        #expect(
            observations.contains {
                if case .storeFailed(_, .refresh) = $0 { return true }
                return false
            }
        )
        for observation in observations {
            stderrAdapter.observe(observation)
            var dumped = ""
            dump(observation, to: &dumped)
            var texts = [observation.description, String(reflecting: observation), dumped, observation.logLine]
            // What an observer reads out of it: the errors' texts.
            switch observation {
            case .signInFinished(_, let error?, _): texts += renderings(of: error)
            case .signedOut(let cause, _): texts += cause.error.map(renderings(of:)) ?? []
            case .storeFailed(let error, _): texts += renderings(of: error)
            case .refreshFinished(let report):
                if case .failed(let error) = report.outcome { texts += renderings(of: error) }
                if case .endedSession(let error) = report.outcome { texts += renderings(of: error) }
            default: break
            }
            for text in texts {
                for secret in secrets {
                    #expect(!text.contains(secret), "a secret in \(text)")
                }
            }
        }
        let written = stderrLines.withLock { $0 }
        #expect(written.count == observations.count)
        for line in written {
            for secret in secrets { #expect(!line.contains(secret), "a secret in the standard-error line \(line)") }
        }
    }
}

@Suite("What the unified log shows in clear holds nothing about the person or the device")
struct PublicLogSummaryTests {

    @Test(
        "the public part of every observation is its severity and its name: never a server's description, a user identifier or a path"
    )
    func publicSummaryHoldsNoPersonalData() {
        let email = "jane.doe@example.com"
        let subject = "001234.5f8e2a9bd3c64e2c8f1d.0917"
        let path = "/Users/janedoe/Library/Application Support/Session/session.json"
        let described = RemoteAuthError(
            .server(code: "invalid_grant"),
            statusCode: 400,
            serverDescription: "the grant of \(email) was revoked"
        )
        let mismatch = RemoteAuthError(.invalidIDToken(.subjectMismatch(expected: subject, actual: "other")))
        let observations: [ManagedSessionObservation] = [
            .signInFinished(grantType: "password", error: .remote(described), duration: 0.2),
            .signedOut(cause: .endedByServer(described), wasSignedIn: true),
            .refreshFinished(
                .init(
                    outcome: .endedSession(.remote(mismatch)),
                    duration: 0.3,
                    attempts: 1,
                    leaseWaits: 0,
                    isLaunch: false
                )
            ),
            .storeFailed(.insecurePermissions(path: path, mode: 0o644), during: .launch),
            .storeFailed(.io(operation: "open", path: path, code: 13), during: .refresh),
            .credentialChecked(.failure(described)),
            .changeNoticesFellBack(.instanceUnavailable(code: EMFILE)),
            .changeNoticesFellBack(.watchRefused(code: ENOSPC)),
        ]
        for observation in observations {
            let summary = observation.publicLogSummary
            #expect(summary == "AuthSessionKit [\(observation.severity)] \(observation.name)")
            for personal in [email, subject, path, "janedoe", "jane.doe"] {
                #expect(!summary.contains(personal), "\(summary)")
            }
            #expect(observation.logLine.hasPrefix(summary), "the private detail follows the public summary")
        }
    }
}
