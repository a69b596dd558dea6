import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

// Fixtures for the manager's tests of faults and races: users, a server, a manager not
// attached to a handle that publishes into a log, and a store and remotes that hold or bend what
// the manager sees at a chosen point.
//
// No sleeps synchronise anything: the server holds refreshes (`holdsRefreshes`), the manual clock
// is moved by hand, a store below pauses the refresh thread at a chosen point, a remote below holds
// credential checks; the timeouts are safety nets.

let advAda = ManagedUser(identifier: "adv-ada", name: "Ada Lovelace", email: "ada@example.com")

let advBob = ManagedUser(identifier: "adv-bob", name: "Bob", email: "bob@example.com")

let advPassword = "adversarial password 1"

func advGrant(_ user: ManagedUser) -> AuthGrant {
    .password(username: user.identifier, password: advPassword)
}

func advServer(_ clock: ManualClock) -> InProcessAuthorizationServer {
    let server = InProcessAuthorizationServer(clock: clock)
    server.register(advAda, password: advPassword)
    server.register(advBob, password: advPassword)
    return server
}

/// A session the server issued to `user` now, as a store holds it after a sign-in.
func advIssued(
    _ server: InProcessAuthorizationServer,
    _ user: ManagedUser = advAda,
    _ clock: ManualClock
) async throws -> ManagedSession {
    let tokens = try await server.obtainTokens(with: advGrant(user))
    return storedSession(from: tokens, for: user, at: clock)
}

/// Polls `condition` (yielding) until it holds or `timeout` real seconds pass: a safety net.
func advEventually(timeout: TimeInterval = 300, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline { return false }
        await Task.yield()
    }
    return true
}

/// Records every event a provider publishes; an optional hook runs inside `publish`, after the
/// event is recorded (it may block, or call back into the provider).
final class AdvEventLog: Sendable {
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
final class AdvHookStore: SessionStore, @unchecked Sendable {
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
final class AdvRemote: RemoteAuthService, Sendable {
    let server: InProcessAuthorizationServer
    private struct State {
        var holdsChecks = false
        var held: [CheckedContinuation<Void, Never>] = []
        var checkCount = 0
        var verdict: CredentialState?
        var stripsRefreshTokens = false
        var signInAccessToken: String?
        var serverClockOffset: TimeInterval?
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
    /// The server clock offset every answer reports, as an OAuth 2.0 client measures it.
    var serverClockOffset: TimeInterval? {
        get { state.withLock { $0.serverClockOffset } }
        set { state.withLock { $0.serverClockOffset = newValue } }
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
        tokens.serverClockOffset = serverClockOffset
        return tokens
    }

    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        var tokens = try await server.refresh(refreshToken, scope: scope)
        tokens.serverClockOffset = serverClockOffset
        return tokens
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
struct AdvRig: Sendable {
    let clock: ManualClock
    let server: InProcessAuthorizationServer
    let activation: ManualActivationSignal
    let provider: ManagedSessionProvider
    let log: AdvEventLog
}

func advRig(
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

/// A store that, on the next load inside its exclusive access (the refresh's), sets the bytes
/// aside as corrupt and then pauses that thread until `release()`: the moment between the
/// refresh's check and its write-back.
final class AdvCorruptPauseStore: SessionStore, @unchecked Sendable {
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
final class AdvSubjectSwappingRemote: RemoteAuthService, Sendable {
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
