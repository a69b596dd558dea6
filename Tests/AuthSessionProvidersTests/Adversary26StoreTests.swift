import AuthSession
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Adversary review 26: leases (promise 1), corrupt files while processes run (promise 2), saves
// killed mid-write (promise 4).

/// Records every observation.
private final class Adversary26Observer: ManagedSessionObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var items: [ManagedSessionObservation] = []
    func observe(_ observation: ManagedSessionObservation) {
        lock.lock()
        items.append(observation)
        lock.unlock()
    }
    var observations: [ManagedSessionObservation] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
    var signOuts: [String] {
        observations.compactMap {
            if case .signedOut = $0 { return "\($0)" }
            return nil
        }
    }
}

/// Polls `condition` until it holds or `timeout` real seconds pass.
private func eventually(_ timeout: TimeInterval = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return condition()
}

private func makeManager(
    folder: URL,
    server: InProcessAuthorizationServer,
    clock: ManualClock,
    leaseDuration: TimeInterval,
    observer: Adversary26Observer? = nil
) -> ManagedSessionProvider {
    ManagedSessionProvider(
        store: FileSessionStore(directory: folder, synchronizesWrites: false),
        remote: server,
        retryPolicy: .never,
        clock: clock,
        configuration: .init(
            checksCredentialState: false,
            activationSignal: ManualActivationSignal(),
            refreshLeaseDuration: leaseDuration,
            backgroundTask: nil,
            observer: observer
        )
    )
}

@Suite("Adversary26 lease standing (promise 1)", .serialized)
struct Adversary26LeaseTests {

    /// A owns a 600 s lease (held at the server). Every clock is then set back by `setBack`
    /// seconds. B, whose own lease duration is 30 s, asks for a refresh and has its clock moved
    /// on by `elapsed` seconds (more than its own 30 s, less than A's 600 s): it must not present
    /// the token A is presenting.
    @Test(arguments: [(90.0, 100.0), (3600.0, 100.0), (3600.0, 400.0), (0.0, 200.0)])
    func shorterLeaseDoesNotTakeOverAfterClockSetBack(setBack: TimeInterval, elapsed: TimeInterval) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let serverClock = ManualClock()
        let server = InProcessAuthorizationServer(clock: serverClock)
        server.register(ManagedUser(identifier: "ada"), password: "pw-adversary-26")
        let clockA = ManualClock()
        let clockB = ManualClock()
        let a = makeManager(folder: folder.url, server: server, clock: clockA, leaseDuration: 600)
        let handleA = AuthSessionHandle(sessionProvider: a)
        try await a.signIn(with: .password(username: "ada", password: "pw-adversary-26"))
        let b = makeManager(folder: folder.url, server: server, clock: clockB, leaseDuration: 30)
        let handleB = AuthSessionHandle(sessionProvider: b)
        await b.waitUntilIdle()
        #expect(b.session != nil)

        server.holdsRefreshes = true
        let refreshA = Task { try await a.refresh() }
        try await server.waitForHeldRefreshes(1)
        #expect(server.presentedRefreshTokens.count == 1)

        clockA.advance(by: -setBack)
        clockB.advance(by: -setBack)
        serverClock.advance(by: -setBack)

        let baseSleepers = clockB.sleeperCount
        let refreshB = Task { try await b.refresh() }
        try await clockB.waitForSleepers(baseSleepers + 1)
        // B's clock runs on, in 2-second steps (its poll), up to `elapsed`.
        var moved: TimeInterval = 0
        while moved < elapsed {
            clockB.advance(by: 2)
            moved += 2
            if !(await eventually(
                5,
                { clockB.sleeperCount >= baseSleepers + 1 || server.presentedRefreshTokens.count > 1 }
            )) {
                break
            }
        }
        #expect(
            server.presentedRefreshTokens.count == 1,
            "B presented A's refresh token \(elapsed) s after a set-back of \(setBack) s"
        )
        server.releaseHeldRefreshes()
        _ = try? await refreshA.value
        // B ends with A's rotation, one way or another.
        clockB.advance(by: 2)
        _ = try? await refreshB.value
        await a.waitUntilIdle()
        await b.waitUntilIdle()
        #expect(server.duplicatePresentations.isEmpty)
        _ = handleA
        _ = handleB
    }
}

@Suite("Adversary26 corrupt file while running (promise 2)", .serialized)
struct Adversary26CorruptTests {

    enum Corruption: String, CaseIterable, Sendable {
        case garbageRenamed, emptyRenamed, nullRenamed, emptyObjectInPlace, truncatedInPlace, garbageInPlace
    }

    @Test(arguments: Corruption.allCases)
    func corruptFileIsNoSignOut(_ corruption: Corruption) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = InProcessAuthorizationServer(clock: ManualClock())
        server.register(ManagedUser(identifier: "ada"), password: "pw-adversary-26")
        let observerA = Adversary26Observer()
        let observerB = Adversary26Observer()
        let a = makeManager(
            folder: folder.url,
            server: server,
            clock: ManualClock(),
            leaseDuration: 120,
            observer: observerA
        )
        let handleA = AuthSessionHandle(sessionProvider: a)
        try await a.signIn(with: .password(username: "ada", password: "pw-adversary-26"))
        let b = makeManager(
            folder: folder.url,
            server: server,
            clock: ManualClock(),
            leaseDuration: 120,
            observer: observerB
        )
        let handleB = AuthSessionHandle(sessionProvider: b)
        await b.waitUntilIdle()
        #expect(b.session != nil)

        let path = folder.path("session.json")
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let bytes: Data =
            switch corruption {
            case .garbageRenamed, .garbageInPlace: Data("\u{1}\u{2}not json at all".utf8)
            case .emptyRenamed: Data()
            case .nullRenamed: Data("null".utf8)
            case .emptyObjectInPlace: Data("{}".utf8)
            case .truncatedInPlace: original.prefix(original.count / 2)
            }
        switch corruption {
        case .garbageRenamed, .emptyRenamed, .nullRenamed:
            let temporary = folder.path(".writer-tmp")
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            bytes.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
            close(fd)
            rename(temporary, path)
        case .emptyObjectInPlace, .truncatedInPlace, .garbageInPlace:
            let fd = open(path, O_WRONLY | O_TRUNC)
            bytes.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        // Both hear the change; one sets the bytes aside, and the session is written back.
        let restored = await eventually(300) {
            guard let data = FileManager.default.contents(atPath: path), data.count > 100 else { return false }
            return !FileManager.default.fileExists(atPath: path + ".set-aside")
        }
        await a.waitUntilIdle()
        await b.waitUntilIdle()
        #expect(restored, "the session was not written back")
        #expect(a.session != nil, "A lost its session")
        #expect(b.session != nil, "B lost its session")
        #expect(observerA.signOuts.isEmpty, "A: \(observerA.signOuts)")
        #expect(observerB.signOuts.isEmpty, "B: \(observerB.signOuts)")
        _ = handleA
        _ = handleB
    }

    /// A process that hears nothing (its notices are late: suspended) while another process
    /// launches over the corrupt file, then reads the store at its activation.
    @Test func launchOverCorruptFileDoesNotSignOutTheRunningProcess() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = InProcessAuthorizationServer(clock: ManualClock())
        server.register(ManagedUser(identifier: "ada"), password: "pw-adversary-26")
        let observerA = Adversary26Observer()
        let a = ManagedSessionProvider(
            store: NoNoticeStore(FileSessionStore(directory: folder.url, synchronizesWrites: false)),
            remote: server,
            retryPolicy: .never,
            clock: ManualClock(),
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                backgroundTask: nil,
                observer: observerA
            )
        )
        let handleA = AuthSessionHandle(sessionProvider: a)
        try await a.signIn(with: .password(username: "ada", password: "pw-adversary-26"))
        let path = folder.path("session.json")
        let fd = open(path, O_WRONLY | O_TRUNC)
        _ = write(fd, "garbage", 7)
        close(fd)
        // A second process launches now: it reads the corrupt bytes first.
        let l = makeManager(folder: folder.url, server: server, clock: ManualClock(), leaseDuration: 120)
        let handleL = AuthSessionHandle(sessionProvider: l)
        await l.waitUntilIdle()
        // Then A reads the store (its activation).
        a.reloadStore()
        await a.waitUntilIdle()
        _ = await eventually(5) { FileManager.default.contents(atPath: path).map { $0.count > 100 } ?? false }
        await a.waitUntilIdle()
        #expect(a.session != nil, "A lost its session")
        #expect(observerA.signOuts.isEmpty, "A: \(observerA.signOuts)")
        _ = handleA
        _ = handleL
    }
}

/// A file store whose change notices never reach the manager (a process that is suspended, or
/// whose notices are late): it reads the store only when told.
private struct NoNoticeStore: SessionStore {
    let base: FileSessionStore
    init(_ base: FileSessionStore) { self.base = base }
    func load() throws(SessionStoreError) -> ManagedSession? { try base.load() }
    func save(_ session: ManagedSession) throws(SessionStoreError) { try base.save(session) }
    func remove() throws(SessionStoreError) { try base.remove() }
    func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try base.withExclusiveAccess(body)
    }
    func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        try base.withExclusiveAccessIfAvailable(body)
    }
    func loadLease() throws(SessionStoreError) -> RefreshLease? { try base.loadLease() }
    func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) { try base.saveLease(lease) }
    var changeNotifier: (any SessionChangeNotifier)? { nil }
}

@Suite("Adversary26 killed saves leave no token (promise 4)", .serialized)
struct Adversary26KilledSaveTests {

    /// The host process identifiers of `pid`'s children.
    private static func children(of pid: pid_t) -> [pid_t] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [] }
        return tasks.flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    private static func leftovers(in folder: TemporaryFolder) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.url.path)) ?? []
        return names.filter { name in
            guard let data = FileManager.default.contents(atPath: folder.path(name)) else { return false }
            return String(decoding: data, as: UTF8.self).contains("refresh-") && name != "session.json"
        }
    }

    /// A save killed mid-write by a process that runs as PID 1 of its own PID namespace (an app
    /// in a container sharing the folder with the host, or restarted in its container): its
    /// leftover names process 1, which every later process finds "running" (its own init, or
    /// itself). Neither the next save nor a sign-out's `remove()` deletes it.
    @Test func killedSaveInAPIDNamespaceLeavesNoToken() async throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
            let worker = Worker.url
        else { return }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let produced: Bool = try await onOwnThread {
            for _ in 0..<200 {
                let process = Process()
                let output = Pipe()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
                process.arguments = [
                    "--pid", "--fork", "--kill-child=SIGKILL", worker.path, "save-loop", folder.url.path,
                ]
                process.standardOutput = output
                process.standardError = output
                try process.run()
                var buffer = Data()
                var writings = 0
                let target = Int.random(in: 2...12)
                while writings < target {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    writings = String(decoding: buffer, as: UTF8.self).components(separatedBy: "writing ").count - 1
                }
                for child in Self.children(of: process.processIdentifier) {
                    kill(child, SIGKILL)
                }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.url.path)) ?? []
                if names.contains(where: { $0.hasPrefix(".session.json.tmp-1-") }) { return true }
            }
            return false
        }
        guard produced else {
            Issue.record("no kill landed inside a save in 200 tries: inconclusive")
            return
        }
        let store = FileSessionStore(directory: folder.url)
        try store.save(
            ManagedSession(
                accessToken: "host-access",
                refreshToken: "host-token-next",
                expiresAt: 2_000_000_000,
                issuedAt: 1_900_000_000,
                user: ManagedUser(identifier: "worker")
            )
        )
        #expect(Self.leftovers(in: folder).isEmpty, "after the next save: \(Self.leftovers(in: folder))")
        try store.remove()
        #expect(Self.leftovers(in: folder).isEmpty, "after remove(): \(Self.leftovers(in: folder))")
    }

    /// Control: the same without a namespace.
    @Test func killedSaveLeavesNoTokenAfterNextSave() async throws {
        guard Worker.url != nil else { return }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let produced: Bool = try await onOwnThread {
            for _ in 0..<200 {
                let worker = try WorkerProcess(["save-loop", folder.url.path])
                let target = Int.random(in: 2...12)
                var seen = 0
                while seen < target, let line = worker.readLine() {
                    if line.hasPrefix("writing") { seen += 1 }
                }
                worker.kill()
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.url.path)) ?? []
                if names.contains(where: { $0.hasPrefix(".session.json.tmp-") }) { return true }
            }
            return false
        }
        guard produced else { return }
        let store = FileSessionStore(directory: folder.url)
        try store.save(
            ManagedSession(
                accessToken: "host-access",
                refreshToken: "host-token-next",
                expiresAt: 2_000_000_000,
                issuedAt: 1_900_000_000,
                user: ManagedUser(identifier: "worker")
            )
        )
        #expect(Self.leftovers(in: folder).isEmpty, "\(Self.leftovers(in: folder))")
    }
}

@Suite("Adversary26 stopped holder (promises 3 and 6)", .serialized)
struct Adversary26StoppedHolderTests {

    /// X signs out while another process is stopped inside the store's exclusive access (its
    /// removal is deferred); meanwhile Z signs in as someone else (a sign-in takes no exclusive
    /// access). When the holder resumes, X's deferred removal must leave Z's session.
    @Test func deferredSignOutRemovalSparesALaterSignIn() async throws {
        guard Worker.url != nil else { return }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = InProcessAuthorizationServer(clock: ManualClock())
        server.register(ManagedUser(identifier: "ada"), password: "pw-adversary-26")
        server.register(ManagedUser(identifier: "bob"), password: "pw-adversary-26b")
        let x = makeManager(folder: folder.url, server: server, clock: ManualClock(), leaseDuration: 120)
        let handleX = AuthSessionHandle(sessionProvider: x)
        try await x.signIn(with: .password(username: "ada", password: "pw-adversary-26"))
        let holder = try WorkerProcess(["hold-and-stop", folder.url.path])
        defer { holder.kill() }
        let holding: String? = try await onOwnThread { holder.readLine() }
        #expect(holding == "holding")
        let started = Date()
        try? x.signout()
        #expect(Date().timeIntervalSince(started) < 2, "signout() waited for the stopped holder")
        #expect(x.session == nil)
        let z = makeManager(folder: folder.url, server: server, clock: ManualClock(), leaseDuration: 120)
        let handleZ = AuthSessionHandle(sessionProvider: z)
        await z.waitUntilIdle()
        // Z's sign-in waits for the access too: whichever of it and X's removal goes first, bob's
        // session must be what stays.
        let signIn = Task { try await z.signIn(with: .password(username: "bob", password: "pw-adversary-26b")) }
        try? x.signout()
        kill(holder.process.processIdentifier, SIGCONT)
        _ = try await onOwnThread { holder.wait() }
        _ = try await signIn.value
        // X, signed out, tidies up again: must not remove bob's session either.
        try? x.signout()
        await x.waitUntilIdle()
        await z.waitUntilIdle()
        let stored = try FileSessionStore(directory: folder.url).load()
        #expect(stored?.user.identifier == "bob", "bob's sign-in was removed: \(String(describing: stored))")
        #expect(z.session != nil)
        _ = handleX
        _ = handleZ
    }

    /// Every store entry point behind a stopped holder is bounded by the wait limit, and says why.
    @Test func everyEntryPointIsBoundedBehindAStoppedHolder() async throws {
        guard Worker.url != nil else { return }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let seed = FileSessionStore(directory: folder.url)
        try seed.save(
            ManagedSession(
                accessToken: "acc-adv26",
                refreshToken: "ref-adv26",
                expiresAt: 2_000_000_000,
                issuedAt: 1_900_000_000,
                user: ManagedUser(identifier: "ada")
            )
        )
        let holder = try WorkerProcess(["hold-and-stop", folder.url.path])
        defer { holder.kill() }
        let holding: String? = try await onOwnThread { holder.readLine() }
        #expect(holding == "holding")
        let store = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 1)
        let results: [(String, TimeInterval, String)] = try await onOwnThread {
            var out: [(String, TimeInterval, String)] = []
            func time(_ name: String, _ body: () throws -> Void) {
                let start = Date()
                var text = "returned"
                do { try body() } catch { text = "\(error)" }
                out.append((name, Date().timeIntervalSince(start), text))
            }
            time("withExclusiveAccess") { _ = try store.withExclusiveAccess { 1 } }
            time("withExclusiveAccessIfAvailable") { _ = try store.withExclusiveAccessIfAvailable { 1 } }
            time("saveLease") { try store.saveLease(nil) }
            time("load") { _ = try store.load() }
            time("save") {
                try store.save(
                    ManagedSession(
                        accessToken: "acc2-adv26",
                        refreshToken: "ref2-adv26",
                        expiresAt: 2_000_000_000,
                        issuedAt: 1_900_000_000,
                        user: ManagedUser(identifier: "ada")
                    )
                )
            }
            return out
        }
        for (name, duration, text) in results {
            #expect(duration < 5, "\(name) waited \(duration) s: \(text)")
        }
        let exclusive = results.first { $0.0 == "withExclusiveAccess" }
        #expect(exclusive?.2.lowercased().contains("another process") == true, "\(String(describing: exclusive))")
    }
}

/// Used from one thread at a time in these tests (the worker is read on its own thread, then
/// signalled from the test).
extension WorkerProcess: @unchecked Sendable {}
