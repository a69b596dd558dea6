import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

// An adversarial review of `ManagedSessionProvider` against the README's promises ("The session
// manager", its rules and "Honest limits").
//
// - `AdversarialReview: holes` holds one test per hole found. Each one FAILS on the engine that
//   has the hole and documents the exact interleaving; it is meant to pass once the hole is fixed.
// - `AdversarialReview: guarantees that held` pins the attacks that did not break anything.
//
// No sleeps synchronise anything: the server holds refreshes (`holdsRefreshes`), the manual clock
// is moved by hand, a store below pauses the refresh thread at a chosen point, a remote below holds
// credential checks; the timeouts are safety nets.

// MARK: - Fixtures of this file

private let advAda = ManagedUser(identifier: "adv-ada", name: "Ada Lovelace", email: "ada@example.com")
private let advBob = ManagedUser(identifier: "adv-bob", name: "Bob", email: "bob@example.com")
private let advPassword = "adversarial password 1"

private func advGrant(_ user: ManagedUser) -> AuthGrant {
    .password(username: user.identifier, password: advPassword)
}

private func advServer(_ clock: ManualClock) -> InProcessAuthorizationServer {
    let server = InProcessAuthorizationServer(clock: clock)
    server.register(advAda, password: advPassword)
    server.register(advBob, password: advPassword)
    return server
}

/// A session the server issued to `user` now, as a store holds it after a sign-in.
private func advIssued(
    _ server: InProcessAuthorizationServer,
    _ user: ManagedUser = advAda,
    _ clock: ManualClock
) async throws -> ManagedSession {
    let tokens = try await server.obtainTokens(with: advGrant(user))
    return storedSession(from: tokens, for: user, at: clock)
}

/// Polls `condition` (yielding) until it holds or `timeout` real seconds pass: a safety net.
private func advEventually(timeout: TimeInterval = 120, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline { return false }
        await Task.yield()
    }
    return true
}

/// Records every event a provider publishes; an optional hook runs inside `publish`, after the
/// event is recorded (it may block, or call back into the provider).
private final class AdvEventLog: Sendable {
    private let storage: ConcurrencySafeContainer<[AuthSessionEvent]>
    private let hook: ConcurrencySafeContainer<(@Sendable (AuthSessionEvent) -> Void)?>
    let proxy: SessionHandleEventProxy

    init() {
        let storage = ConcurrencySafeContainer<[AuthSessionEvent]>([])
        let hook = ConcurrencySafeContainer<(@Sendable (AuthSessionEvent) -> Void)?>(nil)
        self.storage = storage
        self.hook = hook
        proxy = SessionHandleEventProxy { event in
            storage.withLock { $0.append(event) }
            hook.withLock { $0 }?(event)
        }
    }

    func setHook(_ body: (@Sendable (AuthSessionEvent) -> Void)?) {
        hook.withLock { $0 = body }
    }

    var events: [AuthSessionEvent] { storage.withLock { $0 } }

    /// The errors of every `sessionSignedOut`, in order.
    var signOutErrors: [ManagedSessionError?] {
        events.compactMap { event -> ManagedSessionError?? in
            if case .sessionSignedOut(let error) = event { return .some(error as? ManagedSessionError) }
            return nil
        }
    }

    var signOutCount: Int { signOutErrors.count }

    func count(_ matches: (AuthSessionEvent) -> Bool) -> Int {
        events.filter(matches).count
    }
}

/// A store over a `MockSessionStore` that can pause the refresh thread right after its
/// exclusive access ends: after the refresh committed, before its effects run.
private final class AdvHookStore: SessionStore, @unchecked Sendable {
    // Safe: `inner` and `hooks` are thread-safe; the semaphore is only signalled and waited on.
    let inner: MockSessionStore
    private struct Hooks {
        /// How many more exclusive accesses run before the one that pauses; `nil`: none pauses.
        var accessesBeforePause: Int?
        var isPaused = false
    }
    private let hooks = ConcurrencySafeContainer(Hooks())
    private let resume = DispatchSemaphore(value: 0)

    init(_ inner: MockSessionStore) {
        self.inner = inner
    }

    func load() throws(SessionStoreError) -> ManagedSession? { try inner.load() }
    func save(_ session: ManagedSession) throws(SessionStoreError) { try inner.save(session) }
    func remove() throws(SessionStoreError) { try inner.remove() }

    func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        let result = try inner.withExclusiveAccess(body)
        let pauses = hooks.withLock { hooks -> Bool in
            guard let remaining = hooks.accessesBeforePause else { return false }
            guard remaining == 0 else {
                hooks.accessesBeforePause = remaining - 1
                return false
            }
            hooks.accessesBeforePause = nil
            hooks.isPaused = true
            return true
        }
        if pauses { resume.wait() }
        return result
    }

    /// The exclusive access after `skipping` more pauses its thread after its body, until
    /// `release()`. A refresh takes two: its claim, then its commit.
    func pauseExclusiveAccess(skipping: Int) {
        hooks.withLock { $0.accessesBeforePause = skipping }
    }

    var isPaused: Bool { hooks.withLock { $0.isPaused } }

    func release() {
        hooks.withLock { $0.isPaused = false }
        resume.signal()
    }
}

/// A remote over the in-process server that can hold credential checks, answer them with a fixed
/// verdict, drop refresh tokens from sign-ins, or give a sign-in a plain-word access token.
private final class AdvRemote: RemoteAuthService, Sendable {
    let server: InProcessAuthorizationServer
    private struct State {
        var holdsChecks = false
        var held: [CheckedContinuation<Void, Never>] = []
        var checkCount = 0
        var verdict: CredentialState?
        var stripsRefreshTokens = false
        var signInAccessToken: String?
    }
    private let state = ConcurrencySafeContainer(State())

    init(_ server: InProcessAuthorizationServer) {
        self.server = server
    }

    var holdsChecks: Bool {
        get { state.withLock { $0.holdsChecks } }
        set { state.withLock { $0.holdsChecks = newValue } }
    }
    var verdict: CredentialState? {
        get { state.withLock { $0.verdict } }
        set { state.withLock { $0.verdict = newValue } }
    }
    var stripsRefreshTokens: Bool {
        get { state.withLock { $0.stripsRefreshTokens } }
        set { state.withLock { $0.stripsRefreshTokens = newValue } }
    }
    /// The access token the next sign-in answers with instead of the server's.
    var signInAccessToken: String? {
        get { state.withLock { $0.signInAccessToken } }
        set { state.withLock { $0.signInAccessToken = newValue } }
    }
    var checkCount: Int { state.withLock { $0.checkCount } }
    var heldCheckCount: Int { state.withLock { $0.held.count } }

    func releaseChecks() {
        let held = state.withLock { state in
            defer {
                state.held = []
                state.holdsChecks = false
            }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        var tokens = try await server.obtainTokens(with: grant)
        let (strips, replacement) = state.withLock { state in
            defer { state.signInAccessToken = nil }
            return (state.stripsRefreshTokens, state.signInAccessToken)
        }
        if strips { tokens.refreshToken = nil }
        if let replacement { tokens.accessToken = replacement }
        return tokens
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        try await server.refresh(refreshToken, scope: scope)
    }

    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        try await server.revoke(token, kind: kind)
    }

    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isHeld = state.withLock { state -> Bool in
                state.checkCount += 1
                guard state.holdsChecks else { return false }
                state.held.append(continuation)
                return true
            }
            if !isHeld { continuation.resume() }
        }
        if let verdict { return verdict }
        return try await server.credentialState(for: session)
    }
}

/// A manager, not attached to a handle: it publishes into `log`.
private struct AdvRig: Sendable {
    let clock: ManualClock
    let server: InProcessAuthorizationServer
    let activation: ManualActivationSignal
    let provider: ManagedSessionProvider
    let log: AdvEventLog
}

private func advRig(
    store: any SessionStore,
    server: InProcessAuthorizationServer,
    clock: ManualClock,
    remote: (any RemoteAuthService)? = nil,
    checksCredentialState: Bool = false,
    retryPolicy: RetryPolicy = .never,
    starts: Bool = true
) -> AdvRig {
    let activation = ManualActivationSignal()
    let provider = ManagedSessionProvider(
        store: store,
        remote: remote ?? server,
        retryPolicy: retryPolicy,
        clock: clock,
        configuration: .init(checksCredentialState: checksCredentialState, activationSignal: activation)
    )
    let log = AdvEventLog()
    if starts {
        provider.initializeSessionProvider(for: log.proxy)
    }
    return AdvRig(clock: clock, server: server, activation: activation, provider: provider, log: log)
}

// MARK: - Holes

@Suite("AdversarialReview: holes (each test fails while its hole is open)")
struct AdversarialReviewHoleTests {

    // README, "Honest limits" (c): "A process that notices never removes what the store holds: it
    // may be another user's session, signed in meanwhile."
    @Test(
        "fixed: a terminal refresh answer in one process deletes the session another process signed in meanwhile"
    )
    func terminalRefreshDeletesAnotherProcessesSignIn() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        // A presents the refresh token; the server holds its answer.
        server.holdsRefreshes = true
        let refreshA = Task { try await processA.provider.refresh() }
        try await server.waitForHeldRefreshes(1)
        // Meanwhile B signs out (revoking the family A presented) and signs in as Bob.
        try processB.provider.signout()
        await processB.provider.waitUntilIdle()
        try await processB.provider.signIn(with: advGrant(advBob))
        #expect(store.storedSession?.user.identifier == advBob.identifier)
        // A's refresh comes back invalid_grant: terminal for A.
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        _ = await refreshA.result
        await processA.provider.waitUntilIdle()

        #expect(processA.provider.session == nil, "A's own session is over: that part is right")
        #expect(
            store.storedSession?.user.identifier == advBob.identifier,
            "A removed Bob's freshly stored session: store.remove() on a terminal answer without checking what the store holds"
        )
        // B finds out at its next refresh: signed out although nobody signed Bob out.
        _ = try? await processB.provider.refresh()
        #expect(processB.provider.session?.user.identifier == advBob.identifier)
    }

    // README, "Honest limits" (c): "[the next refresh] finds the store empty or holding another
    // user's session and signs out with .signedOutElsewhere (if the same user signed in again there,
    // it adopts that session)".
    @Test(
        "fixed: the same user signing in again in another process during a refresh signs this process out instead of adopting"
    )
    func sameUserSignInElsewhereDuringRefreshSignsOut() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        server.holdsRefreshes = true
        let refreshA = Task { try await processA.provider.refresh() }
        try await server.waitForHeldRefreshes(1)
        let again = try await processB.provider.signIn(with: advGrant(advAda))  // Ada again, a new family
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        _ = await refreshA.result
        await processA.provider.waitUntilIdle()

        #expect(processA.log.signOutErrors.isEmpty, "A signed out: \(processA.log.signOutErrors)")
        let adopted = processA.provider.session?.refreshToken == again.refreshToken
        #expect(adopted, "A did not adopt Ada's new session from the store")
    }

    // README, "Honest limits" (c): "A process that notices never removes what the store holds: it
    // may be another user's session, signed in meanwhile." Overwriting it is worse than removing it.
    @Test("fixed: the retried write after a failed one overwrites the session another process signed in meanwhile")
    func rewriteOverwritesAnotherProcessesSignIn() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        store.failsWrites = true
        _ = try await processA.provider.refresh()  // rotated; the write failed; retried in 2 s
        store.failsWrites = false
        try await processB.provider.signIn(with: advGrant(advBob))
        #expect(store.storedSession?.user.identifier == advBob.identifier)
        clock.advance(by: 2)  // A's retry
        await processA.provider.waitUntilIdle()

        #expect(store.storedSession?.user.identifier == advBob.identifier, "A wrote Ada's session over Bob's")
        _ = try? await processB.provider.refresh()
        #expect(processB.provider.session?.user.identifier == advBob.identifier, "B lost Bob's session")
    }

    // README: "processes sharing a FileSessionStore take its exclusive lock, reload, and adopt a
    // rotation another process already made instead of presenting the spent token"; "The
    // biometric setting, stored with the session, so it survives relaunches and refreshes".
    @Test(
        "fixed: setBioMetricAuthentication in one process writes its stale tokens over another process's rotation: a spent refresh token is presented and the family is revoked"
    )
    func biometricSettingClobbersAnotherProcessesRotation() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        let rotated = try await processB.provider.refresh()  // the store now holds rt2
        #expect(store.storedSession?.refreshToken == rotated.refreshToken)
        processA.provider.setBioMetricAuthentication(true)  // A saves its runtime session: rt1
        let storeKeepsTheRotation = store.storedSession?.refreshToken == rotated.refreshToken
        #expect(storeKeepsTheRotation, "A wrote the spent refresh token over B's rotation")
        _ = try? await processA.provider.refresh()
        _ = try? await processB.provider.refresh()
        await processA.provider.waitUntilIdle()
        await processB.provider.waitUntilIdle()

        let spentPresentations = server.presentedAfterAnsweredRotation.count
        #expect(spentPresentations == 0, "a refresh token was presented after its rotation was answered")
        #expect(processA.provider.session != nil, "A was signed out by reuse detection")
        #expect(processB.provider.session != nil, "B was signed out")
        #expect(server.liveFamilyCount == 1, "the family was revoked for reuse")
    }

    @Test("fixed: a refresh in another process writes its own biometric setting over the one this process stored")
    func biometricSettingLostToAnotherProcessesRefresh() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)

        processA.provider.setBioMetricAuthentication(true)
        #expect(store.storedSession?.isBiometricAuthenticationEnabled == true)
        try await processB.provider.refresh()  // B read the store (bio on) but writes its runtime flag (off)

        #expect(store.storedSession?.isBiometricAuthenticationEnabled == true, "the biometric setting was lost")
        let relaunch = advRig(store: store, server: server, clock: clock)
        #expect(relaunch.provider.isBioMetricAuthenticationEnabled, "the next launch does not gate the session")
    }

    // README: "A signed-out user coming back" is a bug the manager saves apps from; "A store that
    // cannot be read yet (a Keychain before the device's first unlock) ... is tried again". A pushed
    // revocation typically arrives in the background, on a locked device.
    @Test("fixed: a sign-out while the store is locked is never retried: the next launch restores the signed-out user")
    func signOutWhileLockedIsNotRetried() async throws {
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

    // README: "The credential check runs at every launch and at most every 5 minutes on
    // activation"; rule "Sign-in and sign-out start a new generation; a ... result from an older
    // one changes nothing".
    @Test(
        "fixed: a sign-in while the launch's credential check is out stops every later credential check (isCheckingCredential never resets)"
    )
    func credentialChecksStopAfterSignInDuringACheck() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.holdsChecks = true
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock, remote: remote, checksCredentialState: true)
        #expect(await advEventually { remote.heldCheckCount == 1 }, "the launch's check is out")

        try await rig.provider.signIn(with: advGrant(advBob))  // a new generation while the check is out
        remote.releaseChecks()  // the old generation's answer is dropped
        await rig.provider.waitUntilIdle()
        let checksBefore = remote.checkCount

        server.revokeAllSessions(of: advBob.identifier)  // Bob's credential is revoked at the server
        clock.advance(by: 301)
        rig.activation.fire()
        await rig.provider.waitUntilIdle()

        #expect(remote.checkCount == checksBefore + 1, "an activation 5 minutes later did not check the credential")
        #expect(rig.provider.session == nil, "the revoked credential is never noticed by checks")
    }

    // README, errors table: a transient failure "Keeps the session and tries later (the next
    // call, the next activation, the timer)"; "The manager refreshes before expiry on its own".
    @Test("fixed: after a transient failure of the timed refresh, no timer is armed again: the token just expires")
    func timerNotRearmedAfterTransientFailure() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let rig = advRig(store: MockSessionStore(), server: server, clock: clock)
        let session = try await rig.provider.signIn(with: advGrant(advAda))
        try await clock.waitForSleepers(1)  // the proactive refresh timer

        server.enqueueRefreshFaults([.unavailable])
        clock.advance(by: session.expiresAt - 60 - clock.now.timeIntervalSince1970)
        await rig.provider.waitUntilIdle()
        #expect(server.refreshCount == 1)
        #expect(rig.provider.session?.accessToken == session.accessToken, "the session stands: right")

        // Time passes: before expiry, then long after. No call and no activation.
        clock.advance(by: 59)
        await rig.provider.waitUntilIdle()
        clock.advance(by: 3600)
        await rig.provider.waitUntilIdle()

        #expect(server.refreshCount > 1, "nothing ever tried again: the session silently expired")
    }

    @Test("fixed: a server answering expires_in 0 makes the manager refresh in a hot loop")
    func zeroLifetimeTokenRefreshesInAHotLoop() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        server.accessTokenLifetime = 0  // OAuth2Service accepts `expires_in: 0` (only < 0 is refused)
        let rig = advRig(store: MockSessionStore(), server: server, clock: clock)
        try await rig.provider.signIn(with: advGrant(advAda))

        let looped = await advEventually(timeout: 5) { server.refreshCount >= 100 }
        try? rig.provider.signout()  // ends the loop
        await rig.provider.waitUntilIdle()

        #expect(!looped, "\(server.refreshCount) refreshes without the clock moving: a refresh storm")
    }

    @Test("fixed: a sign-in before the handle exists leaves the handle on its splash screen for good")
    func signInBeforeTheHandleLeavesItLoading() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let activation = ManualActivationSignal()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: server,
            retryPolicy: .never,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: activation)
        )
        try await provider.signIn(with: advGrant(advAda))
        #expect(try await provider.validAccessToken().isEmpty == false, "the manager itself works")

        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        activation.fire()
        await handle.waitUntilIdle()

        #expect(
            handle.sessionStatus == .signedIn,
            "launch() saw phase .ready and published nothing: \(handle.sessionStatus)"
        )
    }

    // README, errors table: `.signedOutElsewhere` "Another process sharing the store signed out,
    // or signed in as someone else"; `.storage` "From a refresh: the session stands".
    @Test("fixed: a store found corrupt during a refresh makes the next refresh sign out with signedOutElsewhere")
    func runtimeCorruptStoreSignsOutLater() async throws {
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

    // README: "The handle never signs out for expiry either: the manager owns it"; errors table:
    // `.refreshUnavailable` "The access token expired and there is no refresh token. | Shows sign-in."
    @Test(
        "fixed: a session without a refresh token stays signed in after it expires; every token call says refreshUnavailable"
    )
    func sessionWithoutRefreshTokenOutlivesItsExpiry() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.stripsRefreshTokens = true
        let activation = ManualActivationSignal()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: remote,
            retryPolicy: .never,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: activation)
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
        try await provider.signIn(with: advGrant(advAda))
        await handle.waitUntilIdle()
        #expect(handle.sessionStatus == .signedIn)

        clock.advance(by: 3601)
        activation.fire()
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        var thrown: ManagedSessionError?
        do { _ = try await provider.validAccessToken() } catch { thrown = error }
        // Signed out at expiry by the timer (refreshUnavailable); the call then says notSignedIn.
        #expect(thrown?.endsSession == true, "the error says: show sign-in")
        await handle.waitUntilIdle()

        #expect(
            handle.sessionStatus == .signedOut,
            "the handle still says \(handle.sessionStatus) with a dead session (the launch would have signed out)"
        )
    }

    // README: "A misconfiguration (invalid_client) is not retried in a loop: it blocks the
    // automatic refreshes (the timer, activations, validAccessToken())".
    @Test(
        "fixed: a misconfigured refresh is retried on activations when the credential check's verdict asks for a refresh"
    )
    func misconfigurationRetriedThroughCredentialVerdicts() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        let rig = advRig(
            store: MockSessionStore(),
            server: server,
            clock: clock,
            remote: remote,
            checksCredentialState: true
        )
        try await rig.provider.signIn(with: advGrant(advAda))
        server.enqueueRefreshFaults(Array(repeating: .invalidClient, count: 10))
        await #expect(throws: ManagedSessionError.self) { try await rig.provider.refresh() }
        await rig.provider.waitUntilIdle()
        let blockedAt = server.refreshCount
        clock.advance(by: 1900)  // 1,700 s left: less than half the lifetime
        await #expect(throws: ManagedSessionError.self) {
            try await rig.provider.validAccessToken(minimumValidity: 3600)
        }
        #expect(server.refreshCount == blockedAt, "validAccessToken is blocked: right")

        remote.verdict = .notFound  // e.g. a token the server no longer knows
        for _ in 0..<3 {
            clock.advance(by: 301)
            rig.activation.fire()
            await rig.provider.waitUntilIdle()
        }
        #expect(
            server.refreshCount == blockedAt,
            "\(server.refreshCount - blockedAt) invalid_client refreshes from activations"
        )
    }

    // The effects of a committed refresh run after its locks are released; a sign-in that commits
    // in between performs its own effects first, and the older refresh's then overwrite them.
    @Test(
        "fixed: a refresh committed just before a sign-in re-arms its stale timer over the new session's, and unregisters its tokens from redaction"
    )
    func staleRefreshEffectsOverwriteTheNewSessions() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        let store = AdvHookStore(MockSessionStore())
        let rig = advRig(store: store, server: server, clock: clock, remote: remote)
        try await rig.provider.signIn(with: advGrant(advAda))

        store.pauseExclusiveAccess(skipping: 1)  // the claim; the commit pauses
        let refresh = Task { try await rig.provider.refresh() }
        #expect(await advEventually { store.isPaused }, "the refresh committed and paused before its effects")

        server.accessTokenLifetime = 7200
        let plainToken = "pumpernickel" + UUID().uuidString.prefix(8).lowercased()
        #expect(SecretRedactor.redact("x \(plainToken) y") == "x \(plainToken) y", "not a credential shape")
        remote.signInAccessToken = plainToken
        let bobSession = try await rig.provider.signIn(with: advGrant(advBob))
        #expect(SecretRedactor.redact(plainToken) == SecretRedactor.placeholder, "registered by the sign-in")
        store.release()
        _ = try await refresh.value
        await rig.provider.waitUntilIdle()

        #expect(rig.provider.session?.accessToken == plainToken)
        #expect(
            SecretRedactor.redact(plainToken) == SecretRedactor.placeholder,
            "the live session's token is no longer redacted"
        )
        #expect(
            clock.nextDeadline == Date(timeIntervalSince1970: bobSession.expiresAt - 60),
            "the proactive timer sleeps until the old session's refresh date"
        )
        let before = server.refreshCount
        clock.advance(by: bobSession.expiresAt - 59 - clock.now.timeIntervalSince1970)
        await rig.provider.waitUntilIdle()
        #expect(server.refreshCount == before + 1, "Bob's session was never refreshed before expiry")
        try? rig.provider.signout()
    }

    // README: "No token in any rendering. Error and event descriptions, localizedDescription,
    // dump and the test kit's own types never show a token".
    @Test("fixed: dump(provider) prints the live tokens (SecretRegistration keeps them in plain fields)")
    func dumpOfTheProviderShowsNoToken() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let rig = advRig(store: InMemorySessionStore(), server: server, clock: clock)
        let session = try await rig.provider.signIn(with: advGrant(advAda))
        var dumped = ""
        dump(rig.provider, to: &dumped)
        let showsAccessToken = dumped.contains(session.accessToken)
        let showsRefreshToken = dumped.contains(session.refreshToken ?? "-")
        #expect(!showsAccessToken, "dump(provider) shows the access token")
        #expect(!showsRefreshToken, "dump(provider) shows the refresh token")
        try? rig.provider.signout()
    }
}

// MARK: - Guarantees that held

@Suite("AdversarialReview: guarantees that held")
struct AdversarialReviewHeldTests {

    @Test(
        "HOLDS: a valid stored session is signed in before the handle's initializer returns; a due one keeps it syncing"
    )
    func launchDoesNotFlash() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let activation = ManualActivationSignal()
        let stored = try await advIssued(server, advAda, clock)
        func makeHandle(
            _ store: MockSessionStore
        ) -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
            let provider = ManagedSessionProvider(
                store: store,
                remote: server,
                retryPolicy: .never,
                clock: clock,
                configuration: .init(checksCredentialState: false, activationSignal: activation)
            )
            return (
                provider,
                AuthSessionHandle(
                    sessionProvider: provider,
                    biometricAuthenticator: MockBiometricAuthenticator(),
                    activationSignal: activation,
                    clock: clock
                )
            )
        }
        let (_, valid) = makeHandle(MockSessionStore(session: stored))
        #expect(valid.sessionStatus == .signedIn)

        clock.advance(by: 3600 - 30)
        server.holdsRefreshes = true
        let (dueProvider, due) = makeHandle(MockSessionStore(session: stored))
        #expect(due.sessionStatus == .syncing)
        try await server.waitForHeldRefreshes(1)
        server.enqueueRefreshFaults([.unavailable])  // a transient failure at launch
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        await dueProvider.waitUntilIdle()
        await due.waitUntilIdle()
        #expect(due.sessionStatus == .signedIn, "a transient launch failure keeps the session")
    }

    @Test("HOLDS: a locked store at launch keeps loading, deletes nothing, and signs in once unlocked")
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

    @Test("HOLDS: a store locked while a rotation is answered keeps the new tokens, signs nobody out, and heals")
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

    @Test("HOLDS: cancelling callers never cancels the shared refresh; nobody hangs (1,000 rounds)")
    func cancellationLeavesTheSharedRefresh() async throws {
        for round in 0..<1_000 {
            let clock = ManualClock()
            let server = advServer(clock)
            let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
            let rig = advRig(store: store, server: server, clock: clock)
            server.holdsRefreshes = true  // before the clock moves: the proactive timer refreshes too
            clock.advance(by: 3600)  // expired
            let callers = (0..<8).map { _ in Task { try await rig.provider.validAccessToken() } }
            // Half cancel at once, some maybe before they registered.
            for caller in callers[0..<4] { caller.cancel() }
            // A safety net: under ThreadSanitizer, with the whole suite running on 2 cores, the
            // refresh's exchange may wait seconds for a thread of the pool.
            let held = await advEventually(timeout: 60) { server.heldRefreshCount == 1 }
            if !held {
                Issue.record(
                    "round \(round): no refresh held: \(rig.provider.waitingCallerCount) waiting, \(server.refreshCount) seen, session \(String(describing: rig.provider.session))"
                )
                break
            }
            for caller in callers[4..<6] { caller.cancel() }
            server.holdsRefreshes = false
            server.releaseHeldRefreshes()
            var tokens = Set<String>()
            var cancelled = 0
            for caller in callers {
                switch await caller.result {
                case .success(let token): tokens.insert(token)
                case .failure(let error as ManagedSessionError) where error == .cancelled: cancelled += 1
                case .failure(let error): Issue.record("round \(round): \(error)")
                }
            }
            await rig.provider.waitUntilIdle()
            // A caller cancelled before its task ran may still find the refreshed token valid on the
            // cheap path: a success, not a hang. The two callers never cancelled get the token.
            let live = rig.provider.session?.accessToken
            #expect(server.refreshCount == 1, "round \(round)")
            #expect(cancelled >= 2 && cancelled + tokens.count >= 3 && tokens.count == 1, "round \(round)")
            let allLive = live != nil && store.storedSession?.accessToken == live && tokens.first == live
            #expect(allLive, "round \(round)")
            if server.refreshCount != 1 || tokens.count != 1 || !allLive { break }
        }
    }

    @Test("HOLDS: a terminal refresh racing a pushed revocation signs out exactly once (2,000 rounds)")
    func oneSignOutForOneTerminalFailure() async throws {
        for round in 0..<2_000 {
            let clock = ManualClock()
            let server = advServer(clock)
            let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
            let rig = advRig(store: store, server: server, clock: clock)
            server.enqueueRefreshFaults([.invalidGrant])
            server.holdsRefreshes = true
            let callers = (0..<4).map { _ in Task { try await rig.provider.refresh() } }
            try await server.waitForHeldRefreshes(1)
            let provider = rig.provider
            let revoked = ConcurrencySafeContainer(false)
            let revocation = Thread {
                provider.handleCredentialRevocation()
                revoked.withLock { $0 = true }
            }
            server.holdsRefreshes = false
            revocation.start()
            server.releaseHeldRefreshes()
            for caller in callers { _ = await caller.result }
            #expect(await advEventually { revoked.withLock { $0 } })
            await rig.provider.waitUntilIdle()
            #expect(rig.log.signOutCount == 1, "round \(round): \(rig.log.signOutErrors)")
            if rig.log.signOutCount != 1 { break }
        }
    }

    @Test(
        "HOLDS: a sign-out during a refresh wins: nothing stored or published after it, orphan revoked (1,000 rounds)"
    )
    func signOutDuringRefreshWins() async throws {
        for round in 0..<1_000 {
            let clock = ManualClock()
            let server = advServer(clock)
            let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
            let rig = advRig(store: store, server: server, clock: clock)
            server.holdsRefreshes = true
            let refresh = Task { try await rig.provider.refresh() }
            try await server.waitForHeldRefreshes(1)
            let provider = rig.provider
            let signedOut = ConcurrencySafeContainer(false)
            let signOut = Thread {
                try? provider.signout()
                signedOut.withLock { $0 = true }
            }
            server.holdsRefreshes = false
            signOut.start()
            server.releaseHeldRefreshes()
            _ = await refresh.result
            #expect(await advEventually { signedOut.withLock { $0 } })
            #expect(rig.log.signOutCount == 1, "round \(round)")
            await rig.provider.waitUntilIdle()
            let events = rig.log.events
            let signedOutAt = events.lastIndex { if case .sessionSignedOut = $0 { true } else { false } } ?? 0
            #expect(store.storedSession == nil, "round \(round)")
            #expect(rig.provider.session == nil, "round \(round)")
            #expect(events[signedOutAt...].count == 1, "round \(round): published after the sign-out: \(events)")
            #expect(server.liveFamilyCount == 0, "round \(round)")
            if store.storedSession != nil || server.liveFamilyCount != 0 { break }
        }
    }

    @Test(
        "HOLDS: another user's sign-in during a refresh wins; a write failure after rotation never presents the spent token"
    )
    func signInDuringRefreshAndWriteFailure() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        server.holdsRefreshes = true
        let refresh = Task { try await rig.provider.refresh() }
        try await server.waitForHeldRefreshes(1)
        try await rig.provider.signIn(with: advGrant(advBob))
        server.holdsRefreshes = false
        server.releaseHeldRefreshes()
        await #expect(throws: ManagedSessionError.superseded) { try await refresh.value }
        await rig.provider.waitUntilIdle()
        #expect(store.storedSession?.user.identifier == advBob.identifier)
        #expect(server.liveFamilyCount == 1, "Alice's orphaned rotation was revoked")

        store.failsWrites = true
        let first = try await rig.provider.refresh()
        #expect(store.storedSession?.refreshToken != first.refreshToken)
        let second = try await rig.provider.refresh()
        #expect(server.presentedRefreshTokens.last == first.refreshToken)
        store.failsWrites = false
        clock.advance(by: 60)
        await rig.provider.waitUntilIdle()
        #expect(store.storedSession?.refreshToken == second.refreshToken)
        #expect(server.duplicatePresentations.isEmpty)
    }

    @Test(
        "HOLDS (limit b): an answer lost is not retried within the refresh; the next presentation of the spent token signs out once"
    )
    func lostAnswerIsTheDocumentedLimit() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(
            store: store,
            server: server,
            clock: clock,
            retryPolicy: RetryPolicy(maximumRetries: 3, initialDelay: 0)
        )
        server.enqueueRefreshFaults([.unavailable, .unavailable])  // certain failures: retried
        _ = try await rig.provider.refresh()
        #expect(server.refreshCount == 3)
        server.enqueueRefreshFaults([.answerLost])
        await #expect(throws: ManagedSessionError.self) { try await rig.provider.refresh() }
        #expect(server.refreshCount == 4, "an uncertain outcome is not retried")
        #expect(rig.provider.session != nil && rig.log.signOutCount == 0)
        _ = try? await rig.provider.refresh()
        await rig.provider.waitUntilIdle()
        #expect(rig.log.signOutCount == 1)
        #expect(server.presentedAfterAnsweredRotation.isEmpty)
    }

    @Test("HOLDS: a misconfiguration blocks the timer, activations and validAccessToken until an explicit refresh")
    func misconfigurationIsNotRetriedInALoop() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let rig = advRig(store: MockSessionStore(), server: server, clock: clock)
        let session = try await rig.provider.signIn(with: advGrant(advAda))
        try await clock.waitForSleepers(1)
        server.enqueueRefreshFaults(Array(repeating: .invalidClient, count: 10))
        clock.advance(by: session.expiresAt - 60 - clock.now.timeIntervalSince1970)
        await rig.provider.waitUntilIdle()
        #expect(server.refreshCount == 1)
        for _ in 0..<5 {
            clock.advance(by: 10)
            rig.activation.fire()
            await #expect(throws: ManagedSessionError.self) {
                try await rig.provider.validAccessToken(minimumValidity: 3600)
            }
            await rig.provider.waitUntilIdle()
        }
        #expect(server.refreshCount == 1)
        #expect(rig.log.signOutCount == 0)
    }

    @Test("HOLDS: a proxy that calls back into the provider from inside publish deadlocks nothing")
    func reentrantPublishDoesNotDeadlock() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        let provider = rig.provider
        let flips = ConcurrencySafeContainer(0)
        rig.log.setHook { event in
            _ = provider.session
            _ = provider.isBioMetricAuthenticationEnabled
            let flip = flips.withLock { count -> Int in
                count += 1
                return count
            }
            if case .sessionUpdated = event, flip < 20 {
                provider.setBioMetricAuthentication(!provider.isBioMetricAuthenticationEnabled)
            }
            if case .sessionFetchFailed = event {
                provider.handleCredentialRevocation()
            }
        }
        for _ in 0..<10 {
            _ = try await rig.provider.refresh()
        }
        server.enqueueRefreshFaults([.unavailable])
        _ = try? await rig.provider.refresh()  // sessionFetchFailed → revocation from inside publish
        await rig.provider.waitUntilIdle()
        #expect(rig.provider.session == nil)
        #expect(rig.log.signOutCount == 1)
        try await rig.provider.signIn(with: advGrant(advBob))
        try rig.provider.signout()
        await rig.provider.waitUntilIdle()
        #expect(rig.log.signOutCount == 2)
    }

    @Test("HOLDS: 64 concurrent callers on an expired token, 300 rounds: one presentation each, no duplicate")
    func oneRefreshForManyCallers() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        for round in 0..<300 {
            clock.advance(by: 3600)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<64 { group.addTask { try await rig.provider.validAccessToken() } }
                var tokens = Set<String>()
                for try await token in group { tokens.insert(token) }
                return tokens
            }
            #expect(tokens.count == 1, "round \(round)")
            #expect(server.refreshCount == round + 1, "round \(round)")
            if server.refreshCount != round + 1 { break }
        }
        #expect(server.duplicatePresentations.isEmpty)
    }

    @Test("HOLDS: no token in errors, events or their dumps")
    func noTokenInErrorsOrEvents() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        let session = try #require(rig.provider.session)
        store.failsWrites = true
        let refreshed = try await rig.provider.refresh()
        let secrets = [
            session.accessToken, session.refreshToken ?? "", refreshed.accessToken, refreshed.refreshToken ?? "",
        ]
        var text = ""
        for event in rig.log.events {
            text += "\(event) \(String(reflecting: event))"
            dump(event, to: &text)
            if case .sessionUpdated(let updated) = event {
                text += "\(String(describing: updated))"
                dump(updated, to: &text)
            }
        }
        let errors: [any Error] = [
            ManagedSessionError.storage(.io(operation: "write", path: "p", code: 5)), ManagedSessionError.superseded,
        ]
        for error in errors {
            text += "\(error) \(error.localizedDescription)"
            dump(error, to: &text)
        }
        dump(session, to: &text)
        dump(server, to: &text)
        dump(store, to: &text)
        for secret in secrets where !secret.isEmpty {
            #expect(!text.contains(secret))
        }
    }
}

// MARK: - Second review (issue 11, after the first fixes)

/// A store that, on the next load inside its exclusive access (the refresh's), sets the bytes
/// aside as corrupt and then pauses that thread until `release()`: the moment between the
/// refresh's check and its write-back.
private final class AdvCorruptPauseStore: SessionStore, @unchecked Sendable {
    // Safe: `inner` and `state` are thread-safe; the semaphore is only signalled and waited on.
    let inner: MockSessionStore
    private let state = ConcurrencySafeContainer((armed: false, paused: false, exclusive: false))
    private let resume = DispatchSemaphore(value: 0)

    init(_ inner: MockSessionStore) {
        self.inner = inner
    }

    func arm() { state.withLock { $0.armed = true } }
    var isPaused: Bool { state.withLock { $0.paused } }
    func release() { resume.signal() }

    func load() throws(SessionStoreError) -> ManagedSession? {
        let pauses = state.withLock { state -> Bool in
            guard state.armed, state.exclusive else { return false }
            state.armed = false
            return true
        }
        guard pauses else { return try inner.load() }
        inner.corruptNextLoad()
        do throws(SessionStoreError) {
            return try inner.load()
        } catch {
            state.withLock { $0.paused = true }
            resume.wait()
            throw error
        }
    }
    func save(_ session: ManagedSession) throws(SessionStoreError) { try inner.save(session) }
    func remove() throws(SessionStoreError) { try inner.remove() }
    func withExclusiveAccess<R>(_ body: () throws -> R) throws -> R {
        try inner.withExclusiveAccess {
            state.withLock { $0.exclusive = true }
            defer { state.withLock { $0.exclusive = false } }
            return try body()
        }
    }
}

/// A remote whose refreshes answer with the server's tokens labelled as `user`'s (an ID token
/// with another `sub`); it remembers the refresh tokens it handed out.
private final class AdvSubjectSwappingRemote: RemoteAuthService, Sendable {
    let server: InProcessAuthorizationServer
    let user: ManagedUser
    private let handedOut = ConcurrencySafeContainer<[String]>([])

    init(_ server: InProcessAuthorizationServer, answeringAs user: ManagedUser) {
        self.server = server
        self.user = user
    }

    var refreshTokensHandedOut: [String] { handedOut.withLock { $0 } }

    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        try await server.obtainTokens(with: grant)
    }
    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        var tokens = try await server.refresh(refreshToken, scope: scope)
        tokens.user = user
        if let token = tokens.refreshToken { handedOut.withLock { $0.append(token) } }
        return tokens
    }
    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        try await server.revoke(token, kind: kind)
    }
    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        try await server.credentialState(for: session)
    }
}

@Suite("AdversarialReview: the second review's holes, fixed")
struct AdversarialSecondReviewTests {

    // README, limit (c): "A process that notices never removes what the store holds"; the
    // biometric setting wrote the runtime session over another user's, or into an emptied store.
    @Test("the biometric setting never overwrites another user's session, nor writes into a store signed out of")
    func biometricSettingRespectsOtherProcesses() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore()
        let processA = advRig(store: store, server: server, clock: clock)
        let processB = advRig(store: store, server: server, clock: clock)
        try await processA.provider.signIn(with: advGrant(advAda))
        let bobsSession = try await processB.provider.signIn(with: advGrant(advBob))

        processA.provider.setBioMetricAuthentication(true)
        #expect(store.storedSession == bobsSession, "A wrote its user over B's")
        #expect(
            processA.log.count {
                if case .unexpectedError(.userUpdateFailure(let error)) = $0 {
                    return error as? ManagedSessionError == .signedOutElsewhere
                }
                return false
            } == 1,
            "the refused write is reported"
        )

        try processB.provider.signout()
        processA.provider.setBioMetricAuthentication(true)
        #expect(store.storedSession == nil, "A wrote a session back into a store B signed out of")
        #expect(!processA.provider.isBioMetricAuthenticationEnabled, "the setting stays as it was")
    }

    // README, limit (c): "if the same user signed in again there, it adopts that session". The
    // manager's own sign-out (expiry without a refresh token) removed the other process's session.
    @Test("a session without a refresh token that expires leaves the same user's newer session in the store")
    func expirySignOutKeepsAnotherProcesssSession() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.stripsRefreshTokens = true
        let store = MockSessionStore()
        let processA = advRig(store: store, server: server, clock: clock, remote: remote)
        let processB = advRig(store: store, server: server, clock: clock, remote: remote)
        try await processA.provider.signIn(with: advGrant(advAda))
        clock.advance(by: 3_000)
        let newer = try await processB.provider.signIn(with: advGrant(advAda))

        clock.advance(by: 601)  // past A's expiry, well before B's
        await processA.provider.waitUntilIdle()

        #expect(processA.provider.session == nil, "A's spent session ends")
        #expect(processA.log.signOutErrors == [.refreshUnavailable])
        #expect(store.storedSession == newer, "A removed B's newer session of the same user")
    }

    // README: "a refresh … that started in an older one changes nothing, stored or published". The
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
        #expect(await advEventually(timeout: 30) { store.isPaused }, "the refresh reached its load")
        try rig.provider.signout()
        store.release()
        _ = try? await refresh.value
        await rig.provider.waitUntilIdle()

        #expect(inner.storedSession == nil, "the signed-out session was written back")
        #expect(rig.provider.session == nil)
        #expect(server.refreshLog.isEmpty, "nothing presented for a signed-out session")
    }

    // OpenID Connect Core §12.2: a refresh's ID token names the session's user. A refresh answer
    // for another subject silently turned the session into that user's.
    @Test("a refresh answered with another user's tokens ends the session and revokes those tokens")
    func refreshForAnotherSubjectEndsTheSession() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvSubjectSwappingRemote(server, answeringAs: advBob)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock, remote: remote)

        await #expect(throws: ManagedSessionError.self) { try await rig.provider.refresh() }
        await rig.provider.waitUntilIdle()

        #expect(rig.provider.session == nil, "the session became \(String(describing: rig.provider.session?.user))")
        #expect(store.storedSession == nil)
        let mismatch = IDTokenValidationError.subjectMismatch(expected: advAda.identifier, actual: advBob.identifier)
        #expect(rig.log.signOutErrors == [.remote(RemoteAuthError(.invalidIDToken(mismatch)))])
        #expect(rig.log.signOutErrors.first??.endsSession == true)
        let handedOut = try #require(remote.refreshTokensHandedOut.first)
        #expect(server.revokedTokens.contains(handedOut), "the other user's tokens are revoked")
    }

    // A released manager must not act: its launch credential check held it alive, and a verdict
    // arriving afterwards started a refresh or a sign-out for a manager nobody holds.
    @Test("a manager released while its credential check is out is gone at once")
    func releasedWhileCheckingCredential() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.holdsChecks = true
        remote.verdict = .revoked
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let isGone: @Sendable () -> Bool = await {
            let rig = advRig(store: store, server: server, clock: clock, remote: remote, checksCredentialState: true)
            #expect(await advEventually { remote.heldCheckCount == 1 }, "the launch check is out")
            return { [weak provider = rig.provider] in provider == nil }
        }()
        #expect(await advEventually(timeout: 30) { isGone() }, "the check keeps the released manager alive")
        remote.releaseChecks()
        #expect(store.storedSession != nil)
    }

    @Test("a sign-in cancelled while the server answers throws cancelled, and changes nothing")
    func cancelledSignIn() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = SlowSignInRemote(server: server, clock: clock, delay: 5)
        let store = MockSessionStore()
        let rig = advRig(store: store, server: server, clock: clock, remote: remote)
        let signIn = Task { try await rig.provider.signIn(with: advGrant(advAda)) }
        try await clock.waitForSleepers(1, timeout: 30)
        signIn.cancel()
        let error = await #expect(throws: ManagedSessionError.self) { try await signIn.value }
        #expect(error == .cancelled)
        #expect(rig.provider.session == nil)
        #expect(store.storedSession == nil)
    }
}
