import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// Model-based random testing of several processes sharing one store: two or three managers on
/// one store that records leases and posts change notices (what a file store does between
/// processes), one rotating server that detects reuse, one clock.
///
/// The model is written from the promises (the README and the article "The session manager"), not from the code: it knows
/// who signed in through which process, with which identity, and who signed out. After every step,
/// once everything is idle, it checks:
///
/// - no refresh token is ever presented twice (leases: one request for any number of processes);
/// - while the server holds a refresh, any number of processes refreshing together send it one
///   request, and all get its answer;
/// - every process that holds a session holds the store's (notices: rotations are adopted, a
///   sign-out elsewhere signs out, another person's sign-in signs out);
/// - the store holds the last sign-in's person, or nothing after a sign-out or an ended session:
///   no process ever writes its session over another person's;
/// - a process's session changes person only through its own sign-in (a different person's
///   sign-in elsewhere is never adopted, with or without a subject).
@Suite("Processes sharing a store: model-based random sequences")
struct SharedStoreModelBasedTests {

    @Test("1,000 random sequences: leases, notices and identity keep their promises after every step", arguments: 0..<2)
    func randomSequences(shard: Int) async throws {
        for index in 0..<500 {
            try await SharedStoreRun(seed: UInt64(1_000_000 + shard * 500 + index)).run()
        }
    }
}

private struct SharedStoreRun {
    let seed: UInt64

    enum Step: CustomStringConvertible {
        case signIn(process: Int, user: ManagedUser, namesUsers: Bool)
        case signOut(process: Int)
        case refresh(process: Int)
        case refreshTogether
        case heldRefreshTogether
        case token(process: Int)
        case advance(TimeInterval)
        case leaseOfAKilledProcess
        case relaunch(process: Int)

        var description: String {
            switch self {
            case .signIn(let process, let user, let names):
                "signIn(\(process), \(user.identifier)\(names ? "" : ", no subject"))"
            case .signOut(let process): "signOut(\(process))"
            case .refresh(let process): "refresh(\(process))"
            case .refreshTogether: "refreshTogether"
            case .heldRefreshTogether: "heldRefreshTogether"
            case .token(let process): "token(\(process))"
            case .advance(let seconds): "advance(\(seconds))"
            case .leaseOfAKilledProcess: "leaseOfAKilledProcess"
            case .relaunch(let process): "relaunch(\(process))"
            }
        }

        static func random(processes: Int, using random: inout SeededRandomNumberGenerator) -> Step {
            let process = Int.random(in: 0..<processes, using: &random)
            switch Int.random(in: 0..<12, using: &random) {
            case 0, 1:
                return .signIn(
                    process: process,
                    user: Bool.random(using: &random) ? alice : bob,
                    namesUsers: Int.random(in: 0..<3, using: &random) > 0
                )
            case 2: return .signOut(process: process)
            case 3: return .refresh(process: process)
            case 4, 5: return .refreshTogether
            case 6: return .heldRefreshTogether
            case 7: return .token(process: process)
            case 8: return .advance(Double(Int.random(in: 1...4000, using: &random)))
            case 9: return .leaseOfAKilledProcess
            case 10: return .relaunch(process: process)
            default: return .refreshTogether
            }
        }
    }

    /// Who a session belongs to, as the model sees it: the account, when the server named it in
    /// the sign-in's answer; otherwise only that sign-in (nothing tells two of them apart).
    enum Person: Hashable, CustomStringConvertible {
        case named(String)
        case anonymousSignIn(Int)

        var description: String {
            switch self {
            case .named(let subject): subject
            case .anonymousSignIn(let number): "anonymous sign-in #\(number)"
            }
        }
    }

    /// What the promises say about the store and each process, from the server's own records
    /// (never from the client's idea of identity).
    struct Model {
        /// Whose session the store should hold: the last sign-in's person, or nobody.
        var storedPerson: Person?
        /// Each process's person: the one it signed in (or launched) with.
        var persons: [Person?]
        /// The sign-ins whose answers named the account.
        var namedSignIns: Set<Int> = []

        /// Whether two persons are one named account (the same subject signed in again: adopted).
        func sameAccount(_ first: Person?, _ second: Person?) -> Bool {
            if case .named(let a) = first, case .named(let b) = second { return a == b }
            return false
        }

        /// The person `session` belongs to, by the server's record of its access token.
        func person(of session: ManagedSession?, server: InProcessAuthorizationServer) -> Person? {
            guard let session, let issuance = server.issuance(ofAccessToken: session.accessToken) else { return nil }
            return namedSignIns.contains(issuance.signIn) ? .named(issuance.subject) : .anonymousSignIn(issuance.signIn)
        }
    }

    func run() async throws {
        var random = SeededRandomNumberGenerator(seed: seed)
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let store = MockSessionStore(postsChangeNotices: true)
        let count = Int.random(in: 2...3, using: &random)
        var processes = (0..<count).map { _ in ManagerHarness(store: store, server: server, clock: clock) }
        var model = Model(storedPerson: nil, persons: Array(repeating: nil, count: count))

        let steps = Int.random(in: 8...16, using: &random)
        for number in 0..<steps {
            let step = Step.random(processes: count, using: &random)
            let context = "seed \(seed), step \(number) \(step)"
            switch step {
            case .signIn(let index, let user, let namesUsers):
                server.namesUsers = namesUsers
                if let session = try? await processes[index].signIn(user),
                    let issuance = server.issuance(ofAccessToken: session.accessToken)
                {
                    if namesUsers { model.namedSignIns.insert(issuance.signIn) }
                    model.storedPerson = model.person(of: session, server: server)
                    model.persons[index] = model.storedPerson
                }
            case .signOut(let index):
                let had = model.person(of: processes[index].provider.session, server: server)
                try? processes[index].provider.signout(with: nil)
                // A sign-out removes its own person's session from the store.
                if let had, had == model.storedPerson || model.sameAccount(had, model.storedPerson) {
                    model.storedPerson = nil
                }
            case .refresh(let index):
                _ = try? await processes[index].provider.refresh()
            case .refreshTogether:
                await withTaskGroup(of: Void.self) { group in
                    for process in processes {
                        group.addTask { _ = try? await process.provider.refresh() }
                    }
                }
            case .heldRefreshTogether:
                let signedIn = processes.filter { $0.provider.session?.refreshToken != nil }
                guard !signedIn.isEmpty else { break }
                let before = server.refreshCount
                server.holdsRefreshes = true
                let group = Task {
                    await withTaskGroup(of: Void.self) { group in
                        for process in signedIn {
                            group.addTask { _ = try? await process.provider.refresh() }
                        }
                    }
                }
                do {
                    try await server.waitForHeldRefreshes(1, timeout: 5)
                } catch {
                    Issue.record(
                        "\(context): no refresh reached the server; \(signedIn.map { "\($0.provider.session.map { "\($0.expiresAt - clock.now.timeIntervalSince1970)" } ?? "none")" }) lease \(String(describing: store.storedLease)) now \(clock.now.timeIntervalSince1970)"
                    )
                    throw error
                }
                // Every other process is waiting for the lease (or adopted already); none presents.
                // (Busy: waiting for its refresh and not for a lease; only the one presenting stays so.)
                try await waitUntil(timeout: 300) {
                    signedIn.filter { $0.provider.leaseWaiterCount == 0 && $0.provider.waitingCallerCount > 0 }.count
                        <= 1
                        || server.heldRefreshCount > 1
                }
                #expect(server.heldRefreshCount == 1, "\(context): one request for \(signedIn.count) processes")
                server.holdsRefreshes = false
                server.releaseHeldRefreshes()
                await group.value
                #expect(server.refreshCount == before + 1, "\(context): one request in all")
            case .token(let index):
                _ = try? await processes[index].provider.validAccessToken()
            case .advance(let seconds):
                clock.advance(by: seconds)
            case .leaseOfAKilledProcess:
                guard let token = store.storedSession?.refreshToken else { break }
                store.recordLease(
                    RefreshLease(
                        owner: .init(processIdentifier: Self.exitedProcessIdentifier, instance: "killed"),
                        startedAt: clock.now.timeIntervalSince1970,
                        deadline: clock.now.timeIntervalSince1970 + 120,
                        refreshTokenFingerprint: RefreshLease.fingerprint(of: token)
                    )
                )
            case .relaunch(let index):
                processes[index] = ManagerHarness(store: store, server: server, clock: clock)
                model.persons[index] = model.person(of: store.storedSession, server: server)
            }
            for process in processes { await process.settle() }
            try await settleNotices(processes, store: store)
            check(processes, store: store, server: server, model: &model, context: context)
        }
    }

    /// Waits until every process has heard the store's last change (its notice is delivered on a
    /// queue of its own, after the write).
    private func settleNotices(_ processes: [ManagerHarness], store: MockSessionStore) async throws {
        try await waitUntil(timeout: 300) {
            let stored = store.storedSession
            return processes.allSatisfy { process in
                guard let session = process.provider.session else { return true }
                guard let stored, session.isSameIdentity(as: stored) else { return false }
                return session.accessToken == stored.accessToken
            }
        }
        for process in processes { await process.settle() }
    }

    private func check(
        _ processes: [ManagerHarness],
        store: MockSessionStore,
        server: InProcessAuthorizationServer,
        model: inout Model,
        context: String
    ) {
        #expect(server.duplicatePresentations.isEmpty, "\(context): a refresh token was presented twice")
        let stored = store.storedSession
        // A session ends (no refresh token left, say): the store is empty, and nobody's.
        if stored == nil { model.storedPerson = nil }
        if let expected = model.storedPerson {
            #expect(
                model.person(of: stored, server: server) == expected,
                "\(context): the store holds \(String(describing: model.person(of: stored, server: server))), not \(expected)"
            )
        }
        for (index, process) in processes.enumerated() {
            guard let session = process.provider.session else { continue }
            #expect(session.accessToken == stored?.accessToken, "\(context): process \(index) holds a stale session")
            let person = model.person(of: session, server: server)
            #expect(
                person == model.persons[index] || model.sameAccount(person, model.persons[index]),
                "\(context): process \(index) signed in as \(String(describing: model.persons[index])) holds \(String(describing: person))'s session"
            )
        }
    }

    /// A process identifier no process has: one that ran and exited.
    static let exitedProcessIdentifier: Int32 = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try? process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }()
}
