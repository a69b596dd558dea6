import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// Records every observation; can hold the observer's queue, and reads the manager from inside.
final class RecordingObserver: ManagedSessionObserver {
    private let recorded = ConcurrencySafeContainer<[ManagedSessionObservation]>([])
    private let hold = ConcurrencySafeContainer<DispatchSemaphore?>(nil)
    /// Called inside `observe`, as an observer that reads the manager would.
    let inside = ConcurrencySafeContainer<(@Sendable () -> Void)?>(nil)

    func observe(_ observation: ManagedSessionObservation) {
        hold.withLock { $0 }?.wait()
        inside.withLock { $0 }?()
        recorded.withLock { $0.append(observation) }
    }

    var observations: [ManagedSessionObservation] { recorded.withLock { $0 } }
    var lines: [String] { observations.map(\.description) }

    /// Holds the queue at the next observation until `release()`.
    func holdNext() { hold.withLock { $0 = DispatchSemaphore(value: 0) } }

    func release() {
        let semaphore = hold.withLock { state -> DispatchSemaphore? in
            defer { state = nil }
            return state
        }
        semaphore?.signal()
    }

    var refreshReports: [ManagedSessionObservation.RefreshReport] {
        observations.compactMap {
            if case .refreshFinished(let report) = $0 { return report }
            return nil
        }
    }
}

/// A manager with an observer, on a manual clock and an in-process server.
struct ObservedManager {
    let clock = ManualClock()
    let server: InProcessAuthorizationServer
    let store: MockSessionStore
    let observer = RecordingObserver()
    let provider: ManagedSessionProvider
    let handle: AuthSessionHandle<ManagedSessionProvider>

    init(
        stored: ManagedSession? = nil,
        remote: ((InProcessAuthorizationServer, ManualClock) -> any RemoteAuthService)? = nil,
        checksCredentialState: Bool = false,
        prepare: (MockSessionStore) -> Void = { _ in }
    ) {
        server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        store = MockSessionStore(session: stored)
        prepare(store)
        provider = ManagedSessionProvider(
            store: store,
            remote: remote?(server, clock) ?? server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(
                checksCredentialState: checksCredentialState,
                activationSignal: ManualActivationSignal(),
                observer: observer
            )
        )
        handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
    }

    func signIn() async throws {
        try await provider.signIn(with: .password(username: "alice", password: alicePassword))
    }

    /// Waits until the manager is idle and every observation reached the observer.
    func settle() async {
        await provider.waitUntilIdle()
        await provider.observationsDelivered()
    }
}

/// The app's own sign-out reason, quoting a token.
private struct RejectedTokenError: Error {
    let detail: String
}

/// Issues short, numbered tokens that do not look like credentials: only the exact redaction of
/// registered tokens can hide them.
private final class ShortTokenRemote: RemoteAuthService, Sendable {
    private let counter = ConcurrencySafeContainer(0)

    private func next() -> Int {
        counter.withLock {
            $0 += 1
            return $0
        }
    }

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        let n = next()
        return IssuedTokens(
            accessToken: "acc\(n)qzwx",
            refreshToken: "ref\(n)qzwx",
            expiresIn: 3600,
            user: ManagedUser(identifier: "alice", name: "Alice")
        )
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        let n = next()
        return IssuedTokens(accessToken: "acc\(n)qzwx", refreshToken: "ref\(n)qzwx", expiresIn: 3600)
    }

    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {}

    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        .authorized
    }
}

@Suite("The observer: sign-ins, sign-outs, refreshes, store failures and credential checks, off the manager's threads")
struct ManagedSessionObserverTests {

    @Test("a sign-in: started, then finished with its outcome and its duration on the manager's clock")
    func signIn() async throws {
        let manager = ObservedManager(remote: { SlowSignInRemote(server: $0, clock: $1, delay: 5) })
        let signIn = Task { try await manager.signIn() }
        try await manager.clock.waitForSleepers(1)
        manager.clock.advance(by: 5)
        try await signIn.value
        await manager.settle()
        #expect(
            manager.observer.lines == ["signInStarted(password)", "signInFinished(password, succeeded in 5.000 s)"]
        )
    }

    @Test("a wrong password: the sign-in finished with the error a person reads as a wrong password")
    func wrongPassword() async throws {
        let manager = ObservedManager()
        _ = try? await manager.provider.signIn(with: .password(username: "alice", password: "nope nope"))
        await manager.settle()
        guard case .signInFinished(_, let error?, _) = manager.observer.observations.last else {
            Issue.record("no failed sign-in: \(manager.observer.lines)")
            return
        }
        #expect(error.problem == .wrongCredentials)
    }

    @Test("refreshes: started and finished, with the attempts (a retried transient failure counts) and the outcome")
    func refreshes() async throws {
        let manager = ObservedManager()
        try await manager.signIn()
        try await manager.provider.refresh()
        manager.server.enqueueRefreshFaults([.unavailable])
        try await manager.provider.refresh()
        manager.server.enqueueRefreshFaults([.unavailable, .unavailable, .unavailable])
        _ = try? await manager.provider.refresh()
        manager.server.revokeAllSessions(of: alice.identifier)
        _ = try? await manager.provider.refresh()
        await manager.settle()
        let reports = manager.observer.refreshReports
        try #require(reports.count == 4)
        #expect(reports[0].outcome == .refreshed && reports[0].attempts == 1)
        #expect(reports[1].outcome == .refreshed && reports[1].attempts == 2, "the retry is an attempt")
        #expect(reports[2].attempts == 3)
        guard case .failed(let transient) = reports[2].outcome, case .remote = transient, !transient.endsSession else {
            Issue.record("not a transient failure: \(reports[2])")
            return
        }
        guard case .endedSession(let ended) = reports[3].outcome else {
            Issue.record("not an ended session: \(reports[3])")
            return
        }
        #expect(ended.problem == .sessionEnded)
        let starts = manager.observer.observations.filter {
            if case .refreshStarted = $0 { return true }
            return false
        }
        #expect(starts.count == 4)
        #expect(manager.observer.lines.last?.hasPrefix("signedOut(endedByServer(") == true, "then the sign-out")
    }

    @Test("a rotation another process stored is adopted: no token presented")
    func adopted() async throws {
        let manager = ObservedManager()
        try await manager.signIn()
        let stored = try #require(manager.store.storedSession)
        let rotated = try await manager.server.refresh(try #require(stored.refreshToken), scope: nil)
        var other = stored
        other.accessToken = rotated.accessToken
        other.refreshToken = rotated.refreshToken
        manager.store.replaceStoredSession(other)
        try await manager.provider.refresh()
        await manager.settle()
        let report = try #require(manager.observer.refreshReports.last)
        #expect(report.outcome == .adopted && report.attempts == 0)
    }

    @Test("a refresh that waited for another process's lease: the waits are counted")
    func leaseWaits() async throws {
        let manager = ObservedManager()
        try await manager.signIn()
        let refreshToken = try #require(manager.provider.session?.refreshToken)
        let now = manager.clock.now.timeIntervalSince1970
        manager.store.recordLease(
            RefreshLease(
                owner: .init(processIdentifier: getpid(), instance: "another-manager"),
                startedAt: now,
                deadline: now + 30,
                refreshTokenFingerprint: RefreshLease.fingerprint(of: refreshToken)
            )
        )
        let refresh = Task { try await manager.provider.refresh() }
        try await waitUntil(timeout: 300) { manager.provider.leaseWaiterCount == 1 }
        try await manager.clock.waitForSleepers(1)
        manager.clock.advance(by: 31)
        _ = try await refresh.value
        await manager.settle()
        let report = try #require(manager.observer.refreshReports.last)
        #expect(report.outcome == .refreshed && report.attempts == 1)
        #expect(report.leaseWaits == 1)
        #expect(report.duration == 31, "on the manager's clock")
    }

    @Test("store failures: a locked store at launch, a sign-in the store cannot keep")
    func storeFailures() async throws {
        let manager = ObservedManager(prepare: { $0.isUnavailable = true })
        await manager.settle()
        manager.store.isUnavailable = false
        manager.provider.reloadStore()
        manager.store.failsWrites = true
        _ = try? await manager.signIn()
        await manager.settle()
        let failures = manager.observer.observations.compactMap { observation -> String? in
            if case .storeFailed(let error, let activity) = observation { return "\(activity): \(error.problem)" }
            return nil
        }
        #expect(failures == ["launch: storageUnavailable", "signIn: storageFailed"])
    }

    @Test("credential checks: the verdict, then the sign-out it causes")
    func credentialCheck() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let manager = ObservedManager(
            stored: stored,
            remote: { server, _ in FixedVerdictRemote(server: server, verdict: .revoked) },
            checksCredentialState: true
        )
        await manager.settle()
        #expect(manager.observer.lines.contains("credentialChecked(revoked)"))
        #expect(manager.observer.lines.last == "signedOut(credentialRevoked(revoked))")
    }

    @Test("a sign-out while the launch refreshes a stored session: observed as the end of that session")
    func signOutDuringTheLaunchRefresh() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        clock.advance(by: 4000)  // due: the launch refreshes it first
        server.holdsRefreshes = true
        let observer = RecordingObserver()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(session: stored),
            remote: server,
            clock: clock,
            configuration: .init(checksCredentialState: false, observer: observer)
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        try await server.waitForHeldRefreshes(1, timeout: 300)
        #expect(provider.session != nil, "the launch found the stored session")
        try provider.signout(with: nil)
        server.releaseHeldRefreshes()
        await provider.waitUntilIdle()
        await provider.observationsDelivered()
        let signOuts = observer.lines.filter { $0.hasPrefix("signedOut") }
        #expect(signOuts == ["signedOut(voluntary)"], "a stored session was there: it ended")
        withExtendedLifetime(handle) {}
    }

    @Test("the app's reason for a sign-out is rendered while the session's tokens are known: none shows later")
    func signOutReasonCarriesNoToken() async throws {
        let manager = ObservedManager(remote: { _, _ in ShortTokenRemote() })
        let recorder = ChangeRecorder(manager.provider)
        var tokens: [String] = []
        for _ in 0..<2 {
            let session = try await manager.provider.signIn(with: .password(username: "alice", password: alicePassword))
            let refreshed = try await manager.provider.refresh()
            tokens += [session.accessToken, refreshed.accessToken, refreshed.refreshToken].compactMap { $0 }
            // The app's own reason quotes the token its API rejected: short, not credential-shaped.
            try manager.provider.signout(with: RejectedTokenError(detail: "rejected \(refreshed.accessToken)"))
        }
        await manager.settle()
        try await recorder.waitForCount(7)
        let causes = recorder.changes.compactMap { change -> SignOutCause? in
            if case .signedOut(let cause) = change.event { return cause }
            return nil
        }
        let observed = manager.observer.observations.compactMap { observation -> SignOutCause? in
            if case .signedOut(let cause, _) = observation { return cause }
            return nil
        }
        try #require(causes.count == 2 && observed.count == 2)
        // The app still matches its own error.
        for cause in causes + observed {
            guard case .requested(let reason) = cause else {
                Issue.record("not the app's reason: \(cause)")
                continue
            }
            #expect(reason.error is RejectedTokenError)
            #expect(cause.error is RejectedTokenError)
            #expect("\(cause)".hasPrefix("requested(RejectedTokenError: "))
        }
        // Every rendering, long after the sign-out unregistered the tokens.
        var renderings: [String] = []
        for observation in manager.observer.observations {
            var dumped = ""
            dump(observation, to: &dumped)
            renderings += ["\(observation)", String(reflecting: observation), dumped]
        }
        for change in recorder.changes {
            var dumped = ""
            dump(change, to: &dumped)
            renderings += ["\(change.event)", String(reflecting: change.event), "\(change)", dumped]
        }
        for cause in causes + observed {
            guard case .requested(let reason) = cause else { continue }
            var dumped = ""
            dump(reason, to: &dumped)
            renderings += ["\(reason)", String(reflecting: reason), dumped]
        }
        for text in renderings {
            for token in tokens where text.contains(token) {
                Issue.record("a rendering shows token \(token): \(text)")
            }
        }
    }

    @Test("a slow observer stalls nothing: sign-in and refreshes finish while it is held; it then gets all, in order")
    func slowObserver() async throws {
        let manager = ObservedManager()
        let provider = manager.provider
        // It reads the manager from inside: called under a lock of the manager, it would deadlock.
        manager.observer.inside.withLock { $0 = { _ = provider.session } }
        manager.observer.holdNext()
        defer { manager.observer.release() }
        // On a task of its own: an observer called on the manager's thread would hold it here.
        let done = ConcurrencySafeContainer(false)
        let work = Task {
            try await manager.signIn()
            for _ in 0..<5 { try await manager.provider.refresh() }
            done.withLock { $0 = true }
        }
        try await waitUntil(timeout: 300, { done.withLock { $0 } })
        #expect(manager.observer.observations.isEmpty, "held at the first, the manager went on")
        manager.observer.release()
        try await work.value
        await manager.settle()
        let lines = manager.observer.lines
        #expect(lines.count == 2 + 10)
        #expect(lines.first == "signInStarted(password)")
        #expect(lines.filter { $0.hasPrefix("refreshStarted") }.count == 5)
    }

    @Test("the standard-error adapter writes one line per observation at or above its severity")
    func standardErrorAdapter() {
        let written = ConcurrencySafeContainer<[String]>([])
        let adapter = StandardErrorSessionObserver(minimumSeverity: .info) { line in
            written.withLock { $0.append(line) }
        }
        adapter.observe(.refreshStarted(isLaunch: false))
        adapter.observe(
            .refreshFinished(.init(outcome: .refreshed, duration: 0.25, attempts: 1, leaseWaits: 0, isLaunch: false))
        )
        adapter.observe(.signedOut(cause: .signedOutElsewhere, wasSignedIn: true))
        #expect(
            written.withLock { $0 } == [
                "AuthSessionKit [info] refreshFinished(refreshed in 0.250 s, 1 attempt, 0 lease waits)\n",
                "AuthSessionKit [warning] signedOut(signedOutElsewhere)\n",
            ]
        )
    }
}
