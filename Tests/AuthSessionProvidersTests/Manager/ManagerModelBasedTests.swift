import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// Model-based random testing of the session manager.
///
/// The reference model is written from the documented rules, not from the code: it knows only
/// what a user of the manager knows (who signed in or out, which faults the server was told to
/// produce) and what the server observed (each refresh presentation and what it did with it). After
/// every step it checks:
///
/// - no refresh token is presented after the server rotated it and the client had the answer;
/// - nothing is published that is not stored (at the moment each event is published), except
///   tokens whose write failed after a rotation;
/// - no transient failure signs out; a terminal answer signs out exactly once; nothing else signs
///   out but an explicit sign-out or corrupt data at launch;
/// - a result from an older generation changes nothing: after a sign-out nothing more is
///   published, and a sign-in during a refresh keeps the new user's session;
/// - concurrent token callers all get the same token, or all fail;
/// - the manager is signed in exactly when the model says it should be.
@Suite("Session manager: model-based random sequences")
struct ManagerModelBasedTests {

    /// 10,000 sequences in four parallel shards.
    @Test(
        "10,000 random sequences: the manager keeps the eleven rules' promises after every step",
        arguments: 0..<4
    )
    func randomSequences(shard: Int) async throws {
        for index in 0..<2_500 {
            let seed = UInt64(shard * 2_500 + index)
            try await ModelRun(seed: seed).run()
        }
    }
}

/// What the manager published, with what was stored and what the runtime held at that moment.
private final class EventLog: AuthSessionEventProxy {
    struct Entry {
        let event: AuthSessionEvent
        let stored: ManagedSession?
        let runtime: ManagedSession?
        /// Whether the store refused writes when the event was published.
        let writesFail: Bool
    }

    private let entries = ConcurrencySafeContainer<[Entry]>([])
    private let snapshot = ConcurrencySafeContainer<(@Sendable () -> (ManagedSession?, ManagedSession?, Bool))?>(nil)

    init(eventListening: @escaping @Sendable (AuthSessionEvent) -> Void) {}

    init(snapshot: @escaping @Sendable () -> (ManagedSession?, ManagedSession?, Bool)) {
        self.snapshot.withLock { $0 = snapshot }
    }

    func publish(_ event: AuthSessionEvent, for sessionProvider: (any AuthSessionProviderProtocol)?) {
        let (stored, runtime, writesFail) = snapshot.withLock { $0 }?() ?? (nil, nil, false)
        entries.withLock { $0.append(Entry(event: event, stored: stored, runtime: runtime, writesFail: writesFail)) }
    }

    var count: Int { entries.withLock { $0.count } }

    func entries(from start: Int) -> [Entry] {
        entries.withLock { Array($0[min(start, $0.count)...]) }
    }
}

/// One random sequence against a fresh manager, server, store and clock.
private struct ModelRun {
    let seed: UInt64

    func run() async throws {
        var random = SeededRandomNumberGenerator(seed: seed)
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        server.register(bob, password: bobPassword)
        let store = MockSessionStore()
        var model = Model()
        var world = World(clock: clock, server: server, store: store)

        // Launch with every store state.
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            break
        case 1:
            store.put(try await issuedSession(by: server, at: clock))
            model.signedIn = true
        case 2:
            store.put(try await issuedSession(by: server, at: clock))
            clock.advance(by: 3600 - 30)
            model.signedIn = true
        case 3:
            store.put(try await issuedSession(by: server, at: clock))
            clock.advance(by: 4000)
            model.signedIn = true
        case 4:
            store.put(try await issuedSession(by: server, at: clock))
            store.corruptNextLoad()
            model.expectsCorruptLaunch = true
        default:
            store.put(try await issuedSession(by: server, at: clock))
            store.isUnavailable = true
            model.signedIn = true
            model.isStoreLocked = true
        }
        try await world.launch(&model, seed: seed)

        let steps = Int.random(in: 6...14, using: &random)
        for number in 0..<steps {
            let step = Step.random(using: &random, model: model)
            let context = "seed \(seed), step \(number) \(step)"
            try await world.apply(step, to: &model, random: &random, context: context)
        }
        world.provider = nil
    }
}

/// What a user of the manager knows, and what the rules say must follow.
private struct Model {
    var signedIn = false
    var isStoreLocked = false
    var expectsCorruptLaunch = false
    /// A write failed after a rotation and no write has succeeded since: the runtime may be ahead
    /// of the store.
    var mayBeUnsaved = false
    /// Refresh tokens a relaunch may present again: its store kept them because the write of
    /// their rotation failed and the process ended before a retry (the documented limit).
    var mayBePresentedAgain: Set<String> = []
}

private enum Step: CustomStringConvertible {
    case signIn(ManagedUser, failingStore: Bool)
    case signOut
    case tokenCalls(count: Int, minimumValidity: TimeInterval)
    case explicitRefresh
    case activation
    case advance(TimeInterval)
    case advanceToNextDeadline
    case fault(InProcessAuthorizationServer.Fault)
    case revokeElsewhere
    case refreshWithFailingStore
    case signOutDuringRefresh
    case signInDuringRefresh(ManagedUser)
    case unlockStore
    case relaunch

    static func random(using random: inout SeededRandomNumberGenerator, model: Model) -> Step {
        let user = Bool.random(using: &random) ? alice : bob
        switch Int.random(in: 0..<20, using: &random) {
        case 0, 1: return .signIn(user, failingStore: Int.random(in: 0..<5, using: &random) == 0)
        case 2: return .signOut
        case 3, 4:
            return .tokenCalls(
                count: Int.random(in: 1...40, using: &random),
                minimumValidity: [30, 600, 4000].randomElement(using: &random) ?? 30
            )
        case 5: return .explicitRefresh
        case 6: return .activation
        case 7: return .advance(Double(Int.random(in: 1...4000, using: &random)))
        case 8, 9: return .advanceToNextDeadline
        case 10, 11:
            let faults: [InProcessAuthorizationServer.Fault] = [
                .unavailable, .answerLost, .invalidGrant, .invalidClient, .tooManyRequests(retryAfter: 5),
            ]
            return .fault(faults.randomElement(using: &random) ?? .unavailable)
        case 12: return .revokeElsewhere
        case 13: return .refreshWithFailingStore
        case 14: return .signOutDuringRefresh
        case 15: return .signInDuringRefresh(user)
        case 16: return model.isStoreLocked ? .unlockStore : .activation
        case 17: return .relaunch
        default: return .tokenCalls(count: 1, minimumValidity: 30)
        }
    }

    var description: String {
        switch self {
        case .signIn(let user, let failing): "signIn(\(user.identifier)\(failing ? ", failing store" : ""))"
        case .signOut: "signOut"
        case .tokenCalls(let count, let validity): "tokenCalls(\(count), minimumValidity: \(validity))"
        case .explicitRefresh: "explicitRefresh"
        case .activation: "activation"
        case .advance(let seconds): "advance(\(seconds))"
        case .advanceToNextDeadline: "advanceToNextDeadline"
        case .fault(let fault): "fault(\(fault))"
        case .revokeElsewhere: "revokeElsewhere"
        case .refreshWithFailingStore: "refreshWithFailingStore"
        case .signOutDuringRefresh: "signOutDuringRefresh"
        case .signInDuringRefresh(let user): "signInDuringRefresh(\(user.identifier))"
        case .unlockStore: "unlockStore"
        case .relaunch: "relaunch"
        }
    }
}

/// The manager under test and its surroundings.
private struct World {
    let clock: ManualClock
    let server: InProcessAuthorizationServer
    let store: MockSessionStore
    var provider: ManagedSessionProvider?
    var log: EventLog?

    init(clock: ManualClock, server: InProcessAuthorizationServer, store: MockSessionStore) {
        self.clock = clock
        self.server = server
        self.store = store
    }

    /// Retries at once, and never waits for a `Retry-After` (the model's clock only moves when a
    /// step moves it).
    static let policy = RetryPolicy(maximumRetries: 2, initialDelay: 0, maximumRetryAfter: 0)

    mutating func launch(_ model: inout Model, seed: UInt64) async throws {
        let provider = ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: Self.policy,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let store = store
        let log = EventLog { [weak provider] in
            (store.storedSession, provider?.session, store.failsWrites || store.isUnavailable)
        }
        self.provider = provider
        self.log = log
        let before = server.refreshLog.count
        provider.initializeSessionProvider(for: log)
        await provider.waitUntilIdle()
        try check(&model, from: 0, refreshesFrom: before, explicitSignOut: false, context: "seed \(seed), launch")
        model.expectsCorruptLaunch = false
    }

    mutating func apply(
        _ step: Step,
        to model: inout Model,
        random: inout SeededRandomNumberGenerator,
        context: String
    ) async throws {
        if case .relaunch = step {
            try await relaunch(&model)
            return
        }
        guard let provider, let log else { return }
        let start = log.count
        let refreshesBefore = server.refreshLog.count
        var explicitSignOut = false
        var ignoresPresentations = false
        switch step {
        case .signIn(let user, let failingStore):
            store.failsWrites = failingStore
            let result = await Result.of { () async throws(ManagedSessionError) -> ManagedSession in
                try await provider.signIn(with: .password(username: user.identifier, password: password(of: user)))
            }
            store.failsWrites = false
            let shouldFail = failingStore || model.isStoreLocked
            #expect((try? result.get()) == nil ? shouldFail : !shouldFail, "sign-in outcome, \(context)")
            if case .success = result {
                model.signedIn = true
                model.mayBeUnsaved = false
            }
        case .signOut:
            try? provider.signout()
            explicitSignOut = true
            model.signedIn = false
            model.mayBeUnsaved = false
        case .tokenCalls(let count, let minimumValidity):
            guard !model.isStoreLocked else { break }
            let results = await withTaskGroup(of: Result<String, ManagedSessionError>.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        await Result.of { () async throws(ManagedSessionError) -> String in
                            try await provider.validAccessToken(minimumValidity: minimumValidity)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            // Callers that joined a refresh that failed get its error; one that came after may
            // start the next and succeed. All that succeed get the same token.
            let tokens = Set(results.compactMap { try? $0.get() })
            #expect(tokens.count <= 1, "every caller gets the same token, \(context)")
        case .explicitRefresh:
            guard !model.isStoreLocked else { break }
            _ = try? await provider.refresh()
        case .activation:
            (provider.configuration.activationSignal as? ManualActivationSignal)?.fire()
        case .advance(let seconds):
            // Never past a timer: the next step may fire it on purpose.
            if let next = clock.nextDeadline {
                clock.advance(by: min(seconds, max(0, next.timeIntervalSince(clock.now) - 1)))
            } else {
                clock.advance(by: seconds)
            }
        case .advanceToNextDeadline:
            _ = clock.advanceToNextDeadline()
        case .fault(let fault):
            server.enqueueRefreshFaults([fault])
        case .revokeElsewhere:
            server.revokeAllSessions(of: alice.identifier)
            server.revokeAllSessions(of: bob.identifier)
        case .refreshWithFailingStore:
            guard !model.isStoreLocked else { break }
            store.failsWrites = true
            if (try? await provider.refresh()) != nil {
                model.mayBeUnsaved = true
            }
            store.failsWrites = false
        case .signOutDuringRefresh:
            guard !model.isStoreLocked, let session = provider.session, session.refreshToken != nil else { break }
            server.holdsRefreshes = true
            let refresh = Task { try await provider.refresh() }
            try await server.waitForHeldRefreshes(1)
            try? provider.signout()
            explicitSignOut = true
            // The event may still be on its way when signout() returns ("Honest limits" (f)):
            // "after the sign-out" counts from the event itself.
            try await waitUntil {
                log.entries(from: start).contains {
                    if case .sessionSignedOut = $0.event { return true }
                    return false
                }
            }
            let signedOutAt = log.count
            server.releaseHeldRefreshes()
            server.holdsRefreshes = false
            _ = try? await refresh.value
            await provider.waitUntilIdle()
            #expect(
                log.count == signedOutAt,
                "nothing published after the sign-out: \(log.entries(from: start).map(\.event)), \(context)"
            )
            #expect(store.storedSession == nil, "the store stays empty, \(context)")
            model.signedIn = false
            model.mayBeUnsaved = false
        case .signInDuringRefresh(let user):
            guard !model.isStoreLocked, let session = provider.session, session.refreshToken != nil else { break }
            server.holdsRefreshes = true
            let refresh = Task { try await provider.refresh() }
            try await server.waitForHeldRefreshes(1)
            let signedIn = try await provider.signIn(
                with: .password(username: user.identifier, password: password(of: user))
            )
            server.releaseHeldRefreshes()
            server.holdsRefreshes = false
            _ = try? await refresh.value
            await provider.waitUntilIdle()
            // The held refresh's answer belongs to the older generation, whatever it is.
            ignoresPresentations = true
            #expect(provider.session?.user.identifier == user.identifier, "the new user's session stands, \(context)")
            #expect(store.storedSession?.accessToken == provider.session?.accessToken, "stored, \(context)")
            #expect(provider.session?.accessToken == signedIn.accessToken || provider.session != nil, "\(context)")
            model.signedIn = true
            model.mayBeUnsaved = false
        case .unlockStore:
            store.isUnavailable = false
            model.isStoreLocked = false
            (provider.configuration.activationSignal as? ManualActivationSignal)?.fire()
        case .relaunch:
            preconditionFailure("handled by relaunch(_:)")
        }
        await provider.waitUntilIdle()
        try check(
            &model,
            from: start,
            refreshesFrom: ignoresPresentations ? server.refreshLog.count : refreshesBefore,
            explicitSignOut: explicitSignOut,
            context: context
        )
    }

    /// The process ends and a new one launches on the same store and server. The new process
    /// starts only once the old manager is gone. On a loaded machine a thread or task of the old
    /// manager that has finished its work can hold it a moment longer; a manager still alive is a
    /// second process sharing the store, whose timer refreshes (and may sign out) beside the new
    /// one. That is the cross-process case, tested on its own; it is not a relaunch. (Seen as 2 in
    /// 10 runs failing under load: the old manager's timer presented a revoked token.)
    mutating func relaunch(_ model: inout Model) async throws {
        let ended = provider?.session
        store.isUnavailable = model.isStoreLocked
        if model.mayBeUnsaved, let stored = store.storedSession?.refreshToken, stored != ended?.refreshToken {
            // The unsaved tokens die with the process: the relaunch starts from the store,
            // whose refresh token the server has spent.
            model.mayBePresentedAgain.insert(stored)
        }
        model.mayBeUnsaved = false
        let isGone: @Sendable () -> Bool = { [weak provider] in provider == nil }
        provider = nil
        log = nil
        try await waitUntil(timeout: 300, isGone)
        model.signedIn = store.storedSession != nil
        try await launch(&model, seed: 0)
    }

    /// The invariants, over the events published since `start` and the presentations since
    /// `refreshesFrom`.
    func check(
        _ model: inout Model,
        from start: Int,
        refreshesFrom: Int,
        explicitSignOut: Bool,
        context: String
    ) throws {
        guard let provider, let log else { return }
        let entries = log.entries(from: start)
        let presentations = Array(server.refreshLog.dropFirst(refreshesFrom))

        // No refresh token presented after an answered rotation.
        #expect(
            Set(server.presentedAfterAnsweredRotation).isSubset(of: model.mayBePresentedAgain),
            "a spent refresh token was presented again, \(context)"
        )

        // Nothing published that is not stored.
        for entry in entries {
            switch entry.event {
            case .sessionSignIn, .sessionUpdated, .sessionFetched:
                if !model.mayBeUnsaved {
                    #expect(entry.stored == entry.runtime, "published \(entry.event) before it was stored, \(context)")
                }
            case .sessionSignedOut:
                // A store that refuses writes cannot remove it; the failure is reported.
                #expect(entry.stored == nil || entry.writesFail, "signed out with a session still stored, \(context)")
            default:
                break
            }
        }

        // Sign-outs: one per terminal answer the client received; none for anything else.
        let signOuts = entries.filter {
            if case .sessionSignedOut = $0.event { return true }
            return false
        }.count
        let terminalAnswers = presentations.filter { $0.outcome == .rejected }.count
        let launchCorrupt = model.expectsCorruptLaunch ? 1 : 0
        let expected = (explicitSignOut ? 1 : 0) + launchCorrupt + (model.signedIn && terminalAnswers > 0 ? 1 : 0)
        #expect(
            signOuts == expected,
            "\(signOuts) sign-outs, expected \(expected) (terminal answers \(terminalAnswers): \(presentations)), \(context)"
        )
        if terminalAnswers > 0 || launchCorrupt > 0 {
            model.signedIn = false
            model.mayBeUnsaved = false
        }

        // Signed in exactly when the model says so (a locked store keeps loading).
        if !model.isStoreLocked {
            #expect((provider.session != nil) == model.signedIn, "signed in: model \(model.signedIn), \(context)")
        }
        if let session = provider.session, !model.mayBeUnsaved {
            #expect(store.storedSession == session, "the runtime session is the stored one, \(context)")
        }
    }
}

extension MockSessionStore {
    /// Stores `session` directly (the test's set-up, not a counted save).
    fileprivate func put(_ session: ManagedSession) {
        try? (self as any SessionStore).save(session)
    }
}

extension Result where Failure == ManagedSessionError {
    /// The result of `body`.
    fileprivate static func of(_ body: () async throws(ManagedSessionError) -> Success) async -> Self {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}
