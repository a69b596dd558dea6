import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import AuthSessionProviders
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The session manager's figures, each beside the least the same job takes.
enum ManagerBenchmarks {

    static let user = ManagedUser(identifier: "bench-user", name: "Bench", email: "bench@example.com")
    static let password = "bench password"

    /// A session of realistic size that expires `seconds` from now.
    static func session(
        expiresIn seconds: TimeInterval,
        accessToken: String? = nil,
        refreshToken: String? = nil
    )
        -> ManagedSession
    {
        let now = Date().timeIntervalSince1970
        return ManagedSession(
            accessToken: accessToken ?? String(repeating: "a", count: 800),
            refreshToken: refreshToken ?? String(repeating: "r", count: 64),
            idToken: String(repeating: "i", count: 900),
            scope: "openid profile email",
            expiresAt: now + seconds,
            issuedAt: now,
            user: user
        )
    }

    /// A configuration with no outside input: no activations, and (for the launch) no credential
    /// check.
    static func configuration(checksCredentialState: Bool = false) -> ManagedSessionProvider.Configuration {
        .init(checksCredentialState: checksCredentialState, activationSignal: SilentActivationSignal())
    }

    /// A handle on `provider`, which starts it.
    static func handle(
        on provider: ManagedSessionProvider,
        clock: any AuthSessionClock = SystemClock()
    )
        -> AuthSessionHandle<ManagedSessionProvider>
    {
        AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: SimulatedBiometricAuthenticator(outcome: .success),
            activationSignal: SilentActivationSignal(),
            clock: clock
        )
    }

    // MARK: - Valid-token read

    /// `validAccessToken()` when no refresh is due vs a bare lock read of the token and its
    /// expiry plus a clock read, both in the same task.
    static func validTokenRead() -> Comparison {
        let session = session(expiresIn: 86_400)
        let provider = ManagedSessionProvider(
            store: InMemorySessionStore(session: session),
            remote: InProcessAuthorizationServer(),
            configuration: configuration()
        )
        let handle = handle(on: provider)
        precondition(handle.sessionStatus == .signedIn, "the provider did not restore its session")
        let bare = ConcurrencySafeContainer((token: session.accessToken, expiresAt: session.expiresAt))
        let reads = 200_000
        return Comparison(
            name: "valid-token read",
            subjectLabel: "await provider.validAccessToken()",
            baselineLabel: "lock read + clock read (same task)",
            unit: "ns/read",
            operations: reads,
            goal: 1.5,
            subject: {
                let total = blocking {
                    var total = 0
                    for _ in 0..<reads {
                        total &+= (try? await provider.validAccessToken())?.utf8.count ?? 0
                    }
                    return total
                }
                precondition(total == reads * session.accessToken.utf8.count, "a read failed")
                blackHole(handle)
            },
            baseline: {
                let total = blocking {
                    var total = 0
                    for _ in 0..<reads {
                        let now = Date().timeIntervalSince1970
                        let token = bare.withLock { $0.expiresAt - now >= 30 ? $0.token : nil }
                        total &+= token?.utf8.count ?? 0
                    }
                    return total
                }
                precondition(total == reads * session.accessToken.utf8.count, "a read failed")
            }
        )
    }

    // MARK: - 10,000 callers on an expired token

    /// 10,000 concurrent `validAccessToken()` calls on an expired token, the remote answering
    /// after 5 ms, until all have their token; vs the floor: 10,000 tasks whose continuations
    /// wait in a locked list, resumed after a 5 ms sleep that the first one starts.
    ///
    /// Both sides start their callers as unstructured tasks that report to a ``CallerFleet``: in
    /// a task group of 10,000 children, the runtime's removal of each finished child walks the
    /// child list, which cost more than everything measured here (81% of the samples).
    static func expiredTokenCallers(repetitions: Int) -> (result: Comparison.Result, note: String) {
        let callers = 10_000
        let server = InProcessAuthorizationServer(clock: SystemClock(), latency: 0.005)
        server.register(user, password: password)
        let grant = AuthGrant.password(username: user.identifier, password: password)
        var remoteCalls: [Int] = []

        func subjectSample() -> Double {
            let tokens = blocking { try? await server.obtainTokens(with: grant) }
            guard let tokens else { fatalError("the in-process server refused the sign-in") }
            let clock = TimerlessClock()
            // Valid at launch (no refresh is due before half its 0.4 s lifetime), expired 0.4 s
            // later; the proactive refresh never fires, since the clock's sleeps outlast the run.
            let now = clock.now.timeIntervalSince1970
            var stored = session(expiresIn: 0.4, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken)
            stored.issuedAt = now
            stored.expiresAt = now + 0.4
            let provider = ManagedSessionProvider(
                store: InMemorySessionStore(session: stored),
                remote: server,
                clock: clock,
                configuration: configuration()
            )
            let handle = handle(on: provider, clock: clock)
            precondition(handle.sessionStatus == .signedIn, "the provider did not restore its session")
            Thread.sleep(forTimeInterval: max(0, stored.expiresAt - Date().timeIntervalSince1970) + 0.005)
            let before = server.refreshCount
            let (elapsed, distinct) = blocking {
                let start = DispatchTime.now().uptimeNanoseconds
                let distinct = await CallerFleet.run(callers) { try? await provider.validAccessToken() }
                return (Double(DispatchTime.now().uptimeNanoseconds - start), distinct)
            }
            let calls = server.refreshCount - before
            precondition(calls == 1, "\(calls) remote refreshes for \(callers) callers")
            precondition(distinct.count == 1 && distinct.first! != nil, "the callers did not all get one token")
            remoteCalls.append(calls)
            blackHole(handle)
            return elapsed
        }

        func baselineSample() -> Double {
            blocking {
                let floor = ContinuationFloor(delay: 0.005)
                let start = DispatchTime.now().uptimeNanoseconds
                let distinct = await CallerFleet.run(callers) { await floor.token() }
                precondition(distinct.count == 1, "the floor handed out more than one token")
                return Double(DispatchTime.now().uptimeNanoseconds - start)
            }
        }

        let comparison = Comparison(
            name: "10,000 callers on an expired token",
            subjectLabel: "validAccessToken() ×10,000, remote 5 ms",
            baselineLabel: "10,000 continuations, locked list, 5 ms sleep",
            unit: "ns (wall, all callers served)",
            operations: 1,
            goal: 1.5,
            subject: {},
            baseline: {}
        )
        let result = measureSamples(
            comparison,
            repetitions: repetitions,
            subject: subjectSample,
            baseline: baselineSample
        )
        let calls = Set(remoteCalls).sorted().map(String.init).joined(separator: ", ")
        return (
            result,
            "InMemorySessionStore; InProcessAuthorizationServer with 5 ms latency on the system clock; "
                + "remote refresh calls per run: \(calls), in each of \(remoteCalls.count) runs"
        )
    }

    // MARK: - Launch restore

    /// The file format's fields, decoded by a bare `JSONDecoder`.
    private struct BareDocument: Decodable {
        struct Session: Decodable {
            struct User: Decodable {
                let subject: String
                let name: String?
                let email: String?
                let profile: [String: String]?
            }
            let accessToken: String
            let refreshToken: String?
            let idToken: String?
            let tokenType: String
            let scope: String?
            let expiresAt: TimeInterval
            let issuedAt: TimeInterval
            let user: User
            let biometricAuthenticationEnabled: Bool

            enum CodingKeys: String, CodingKey {
                case accessToken = "access_token"
                case refreshToken = "refresh_token"
                case idToken = "id_token"
                case tokenType = "token_type"
                case scope
                case expiresAt = "expires_at"
                case issuedAt = "issued_at"
                case user
                case biometricAuthenticationEnabled = "biometric_authentication_enabled"
            }
        }
        let format: String
        let version: Int
        let session: Session
    }

    /// From constructing a store and a provider on a file holding a valid session to the handle
    /// being `.signedIn` (the provider loads during the handle's initializer), vs reading and
    /// decoding the same file bare. The credential check is off. Releasing them is not timed.
    static func launchRestore(repetitions: Int) -> (result: Comparison.Result, note: String) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("auth-session-bench-launch-\(getpid())", isDirectory: true)
        let store = FileSessionStore(directory: folder)
        do {
            try store.save(session(expiresIn: 86_400))
        } catch {
            fatalError("cannot write the session file: \(error)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let remote = InProcessAuthorizationServer()
        let clock = SystemClock()
        let rounds = 1_000

        func subjectSample() -> Double {
            var handles: [AuthSessionHandle<ManagedSessionProvider>] = []
            handles.reserveCapacity(rounds)
            let elapsed = nanoseconds {
                for _ in 0..<rounds {
                    let provider = ManagedSessionProvider(
                        store: FileSessionStore(directory: folder),
                        remote: remote,
                        clock: clock,
                        configuration: configuration(checksCredentialState: false)
                    )
                    let handle = handle(on: provider, clock: clock)
                    precondition(handle.sessionStatus == .signedIn, "the launch did not restore the session")
                    handles.append(handle)
                }
            }
            handles.removeAll()
            return elapsed / Double(rounds)
        }

        func baselineSample() -> Double {
            let now = Date().timeIntervalSince1970
            var documents: [BareDocument] = []
            documents.reserveCapacity(rounds)
            let elapsed = nanoseconds {
                for _ in 0..<rounds {
                    guard let data = try? Data(contentsOf: store.fileURL),
                        let document = try? JSONDecoder().decode(BareDocument.self, from: data)
                    else { fatalError("cannot read the session file") }
                    precondition(document.session.expiresAt > now, "the stored session expired")
                    documents.append(document)
                }
            }
            documents.removeAll()
            return elapsed / Double(rounds)
        }

        let comparison = Comparison(
            name: "launch restore",
            subjectLabel: "store + provider + handle → .signedIn",
            baselineLabel: "Data(contentsOf:) + JSONDecoder",
            unit: "ns/launch",
            operations: 1,
            goal: 2,
            subject: {},
            baseline: {}
        )
        return (
            measureSamples(comparison, repetitions: repetitions, subject: subjectSample, baseline: baselineSample),
            "\(rounds) launches per sample; credential check off; releasing the handles is not timed"
        )
    }

    // MARK: - Support

    /// One warm-up of each, then `repetitions` samples of each, interleaved; each sample function
    /// sets up, times only what it measures, and returns nanoseconds per operation.
    static func measureSamples(
        _ comparison: Comparison,
        repetitions: Int,
        subject: () -> Double,
        baseline: () -> Double
    ) -> Comparison.Result {
        _ = baseline()
        _ = subject()
        var subjectSamples = Samples()
        var baselineSamples = Samples()
        for _ in 0..<repetitions {
            baselineSamples.append(baseline())
            subjectSamples.append(subject())
        }
        return Comparison.Result(comparison: comparison, subject: subjectSamples, baseline: baselineSamples)
    }

    /// Runs `body` on the cooperative pool and waits for it on this thread.
    static func blocking<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
        let box = ConcurrencySafeContainer<Value?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = await body()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0 }!
    }
}

/// The system clock whose sleeps last a day (until cancelled): a manager on it never fires its
/// proactive refresh during a benchmark, so the benchmark decides when a refresh happens.
struct TimerlessClock: AuthSessionClock {
    var now: Date { Date() }

    func sleep(until deadline: Date) async throws {
        try await Task.sleep(nanoseconds: 86_400 * 1_000_000_000)
    }
}

/// The least that serving many waiting callers one answer takes: each caller's continuation goes
/// into a locked list; the first caller starts a 5 ms sleep, after which every continuation is
/// resumed; callers arriving after that get the answer at once.
final class ContinuationFloor: Sendable {
    private struct State {
        var answer: String?
        var waiting: [CheckedContinuation<String, Never>] = []
        var isSleeping = false
    }

    private let state = ConcurrencySafeContainer(State())
    private let delay: TimeInterval

    init(delay: TimeInterval) {
        self.delay = delay
    }

    func token() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let (answer, startsSleep) = state.withLock { state -> (String?, Bool) in
                if let answer = state.answer { return (answer, false) }
                state.waiting.append(continuation)
                defer { state.isSleeping = true }
                return (nil, !state.isSleeping)
            }
            if let answer {
                continuation.resume(returning: answer)
            }
            if startsSleep {
                let nanoseconds = UInt64(delay * 1_000_000_000)
                Task {
                    try? await Task.sleep(nanoseconds: nanoseconds)
                    let (answer, waiting) = state.withLock { state in
                        state.answer = "token"
                        defer { state.waiting = [] }
                        return ("token", state.waiting)
                    }
                    for continuation in waiting {
                        continuation.resume(returning: answer)
                    }
                }
            }
        }
    }
}

/// Callers started as unstructured tasks, each reporting its answer under one lock; the last one
/// wakes whoever waits for them all.
final class CallerFleet<Answer: Hashable & Sendable>: Sendable {
    private struct State {
        var remaining: Int
        var answers = Set<Answer>()
        var waiter: CheckedContinuation<Set<Answer>, Never>?
    }

    private let state: ConcurrencySafeContainer<State>

    private init(count: Int) {
        state = ConcurrencySafeContainer(State(remaining: count))
    }

    /// Starts `count` tasks running `call`, and returns the distinct answers once all have one.
    static func run(_ count: Int, _ call: @escaping @Sendable () async -> Answer) async -> Set<Answer> {
        let fleet = CallerFleet(count: count)
        return await withCheckedContinuation { continuation in
            fleet.state.withLock { $0.waiter = continuation }
            for _ in 0..<count {
                Task { fleet.report(await call()) }
            }
        }
    }

    private func report(_ answer: Answer) {
        let done = state.withLock { state -> (CheckedContinuation<Set<Answer>, Never>, Set<Answer>)? in
            state.answers.insert(answer)
            state.remaining -= 1
            guard state.remaining == 0, let waiter = state.waiter else { return nil }
            return (waiter, state.answers)
        }
        if let (waiter, answers) = done {
            waiter.resume(returning: answers)
        }
    }
}
