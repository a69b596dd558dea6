import AuthSessionProviders
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Adversarial tests of `FileSessionStore.withExclusiveAccess` across instances (separate open
// file descriptions: they exclude each other as two processes would), written from its doc
// comment and `exclusiveAccessWaitLimit`'s. Public API only.

/// A small lock-protected box (public API only: no `@testable`).
private final class Box28b<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func with<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var current: Value { with { $0 } }
}

/// Runs `body` on a thread of its own; the semaphore is signalled when it ends.
private func onThread28b(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = 1 << 20
    thread.start()
    return done
}

/// Waits for `semaphore` at most `seconds` (a safety net); whether it was signalled.
private func wait28b(_ semaphore: DispatchSemaphore, _ seconds: Double) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}

/// The outcome of one access, as text.
private func outcome28b(_ body: () throws -> Void) -> String {
    do {
        try body()
        return "entered"
    } catch let error as SessionStoreError {
        return "SessionStoreError: \(error)"
    } catch {
        return "other error: \(error)"
    }
}

private func isUnavailable28b(_ text: String) -> Bool { text.hasPrefix("SessionStoreError: ") && text.contains("held") }

private func fileBytes28b(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

@Suite(
    "Adversary28b: exclusive access of FileSessionStore across instances",
    // One at a time: each holds the thread it runs on for seconds, and two at once would hold
    // both of the cooperative pool's threads on this 2-core machine, stalling every other test.
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "threads held for seconds on the test's own threads: plain swift test runs it; FileCoordinationTests and ExclusiveAccessTurnsTests run under TSan"
    )
)
struct Adversary28bExclusiveAccessTests {

    @Test(
        "Adversary28b: many threads on two instances, read-modify-write of a counter file: no lost update, never two inside"
    )
    func counterNoLostUpdate() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let second = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let counterPath = folder.path("counter.txt")
        try "0".write(toFile: counterPath, atomically: false, encoding: .utf8)
        let inside = Box28b(0)
        let overlaps = Box28b(0)
        let errors = Box28b<[String]>([])
        let perThread = 150
        let threadsPerStore = 3
        var dones: [DispatchSemaphore] = []
        for index in 0..<(threadsPerStore * 2) {
            let store = index % 2 == 0 ? first : second
            dones.append(
                onThread28b {
                    for _ in 0..<perThread {
                        let result = outcome28b {
                            try store.withExclusiveAccess {
                                if inside.with({ value -> Int in
                                    value += 1
                                    return value
                                }) != 1 {
                                    overlaps.with { $0 += 1 }
                                }
                                let text = (try? String(contentsOfFile: counterPath, encoding: .utf8)) ?? "-1"
                                let value = Int(text) ?? -1_000_000
                                // Widen the window a lost update needs.
                                sched_yield()
                                try? "\(value + 1)".write(toFile: counterPath, atomically: false, encoding: .utf8)
                                inside.with { $0 -= 1 }
                            }
                        }
                        if result != "entered" { errors.with { $0.append(result) } }
                    }
                }
            )
        }
        for done in dones {
            #expect(wait28b(done, 60), "a thread did not finish within 60 s")
        }
        let final = try String(contentsOfFile: counterPath, encoding: .utf8)
        #expect(errors.current.isEmpty, "\(errors.current.prefix(3))")
        #expect(overlaps.current == 0, "two threads were inside at once")
        #expect(Int(final) == perThread * threadsPerStore * 2, "lost updates: \(final)")
    }

    @Test(
        "Adversary28b: uncontended accesses, across two instances and after a contended episode, write nothing to the lock file"
    )
    func uncontendedWritesNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 5)
        let second = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 5)
        let lockPath = folder.path("session.json.lock")
        for _ in 0..<50 {
            try first.withExclusiveAccess {}
            try second.withExclusiveAccess {}
            _ = try first.withExclusiveAccessIfAvailable {}
        }
        #expect(fileBytes28b(lockPath) == [], "nobody waited, yet the lock file holds bytes")

        // A contended episode: the second waits while the first holds a little.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = onThread28b {
            try? first.withExclusiveAccess {
                entered.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        #expect(wait28b(entered, 10))
        let waiterResult = Box28b("")
        let waiter = onThread28b { waiterResult.with { $0 = outcome28b { try second.withExclusiveAccess {} } } }
        // Let the waiter ask at least once: the asked word is set by it.
        let deadline = Date().addingTimeInterval(5)
        while (fileBytes28b(lockPath)?.count ?? 0) < 16, Date() < deadline { usleep(1_000) }
        release.signal()
        #expect(wait28b(holder, 10))
        #expect(wait28b(waiter, 10))
        #expect(waiterResult.current == "entered")
        let after = fileBytes28b(lockPath)
        var before = stat()
        _ = stat(lockPath, &before)
        for _ in 0..<50 {
            try first.withExclusiveAccess {}
            try second.withExclusiveAccess {}
        }
        var later = stat()
        _ = stat(lockPath, &later)
        #expect(fileBytes28b(lockPath) == after, "uncontended accesses after contention changed the lock file")
        #expect(before.st_mtim.tv_sec == later.st_mtim.tv_sec && before.st_mtim.tv_nsec == later.st_mtim.tv_nsec)
    }

    /// A holder on another instance takes many short turns for several times the waiter's limit.
    private func holderTakingTurns(
        turnLength: useconds_t,
        holderThreads: Int,
        holderInstances: Int,
        waiterLimit: TimeInterval,
        holdFor: TimeInterval
    ) throws -> (waiter: String, waited: TimeInterval, turns: Int) {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let waiterStore = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: waiterLimit)
        try waiterStore.withExclusiveAccess {}
        let holders = (0..<holderInstances).map { _ in
            FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 30)
        }
        let stop = Box28b(false)
        let turns = Box28b(0)
        let firstTurn = DispatchSemaphore(value: 0)
        var holderDones: [DispatchSemaphore] = []
        let until = Date().addingTimeInterval(holdFor)
        for index in 0..<(holderThreads * holderInstances) {
            let store = holders[index % holderInstances]
            holderDones.append(
                onThread28b {
                    while !stop.current && Date() < until {
                        try? store.withExclusiveAccess {
                            if turns.with({ value -> Int in
                                value += 1
                                return value
                            }) == 1 {
                                firstTurn.signal()
                            }
                            usleep(turnLength)
                        }
                    }
                }
            )
        }
        #expect(wait28b(firstTurn, 10))
        let result = Box28b("")
        let started = Date()
        let waited = Box28b<TimeInterval>(0)
        let waiter = onThread28b {
            let text = outcome28b { try waiterStore.withExclusiveAccess {} }
            waited.with { $0 = Date().timeIntervalSince(started) }
            result.with { $0 = text }
        }
        let finished = wait28b(waiter, holdFor + 20)
        stop.with { $0 = true }
        for done in holderDones { _ = wait28b(done, 20) }
        #expect(finished, "the waiter neither entered nor gave up")
        return (result.current, waited.current, turns.current)
    }

    @Test(
        "Adversary28b: a holder instance re-acquiring in short turns (5 ms) for 3x the waiter's limit: the waiter never fails"
    )
    func shortTurnsForLongerThanLimit() throws {
        let outcome = try holderTakingTurns(
            turnLength: 5_000,
            holderThreads: 1,
            holderInstances: 1,
            waiterLimit: 0.5,
            holdFor: 1.6
        )
        #expect(outcome.waiter == "entered", "\(outcome)")
    }

    @Test(
        "Adversary28b: two holder threads on one instance (in-process queue) taking 1 ms turns: the waiter never fails"
    )
    func twoThreadsOneInstance() throws {
        let outcome = try holderTakingTurns(
            turnLength: 1_000,
            holderThreads: 2,
            holderInstances: 1,
            waiterLimit: 0.4,
            holdFor: 1.5
        )
        #expect(outcome.waiter == "entered", "\(outcome)")
    }

    @Test("Adversary28b: turns of 250 ms (each under the 0.6 s limit) for 2 s: the waiter never fails")
    func longishTurnsUnderTheLimit() throws {
        let outcome = try holderTakingTurns(
            turnLength: 250_000,
            holderThreads: 1,
            holderInstances: 1,
            waiterLimit: 0.6,
            holdFor: 2.0
        )
        #expect(outcome.waiter == "entered", "\(outcome)")
    }

    @Test("Adversary28b: three holder instances taking zero-length turns as fast as they can: the waiter never fails")
    func busyQueueOfInstances() throws {
        let outcome = try holderTakingTurns(
            turnLength: 0,
            holderThreads: 1,
            holderInstances: 3,
            waiterLimit: 0.3,
            holdFor: 1.5
        )
        #expect(outcome.waiter == "entered", "\(outcome)")
    }

    @Test("Adversary28b: a holder that takes no turn for longer than the limit: unavailable, within a bounded time")
    func stoppedHolderGivesUp() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let holder = FileSessionStore(directory: folder.url)
        let waiter = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.5)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = onThread28b {
            try? holder.withExclusiveAccess {
                entered.signal()
                _ = release.wait(timeout: .now() + 15)
            }
        }
        #expect(wait28b(entered, 10))
        let started = Date()
        var caught: SessionStoreError?
        do { try waiter.withExclusiveAccess {} } catch let error as SessionStoreError { caught = error }
        let waited = Date().timeIntervalSince(started)
        release.signal()
        #expect(wait28b(holding, 10))
        if case .unavailable = caught {
        } else {
            Issue.record("expected unavailable, got \(String(describing: caught))")
        }
        #expect(waited >= 0.45 && waited < 5, "waited \(waited) s")
    }

    @Test(
        "Adversary28b: four threads of one instance behind a stopped holder: each call gives up after about the limit, not after its turn in the queue"
    )
    func queuedThreadsBehindStoppedHolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let limit: TimeInterval = 0.5
        let holder = FileSessionStore(directory: folder.url)
        let waiter = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: limit)
        try waiter.withExclusiveAccess {}
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = onThread28b {
            try? holder.withExclusiveAccess {
                entered.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        #expect(wait28b(entered, 10))
        let results = Box28b<[(String, TimeInterval)]>([])
        let started = Date()
        let dones = (0..<4).map { _ in
            onThread28b {
                let text = outcome28b { try waiter.withExclusiveAccess {} }
                let waited = Date().timeIntervalSince(started)
                results.with { $0.append((text, waited)) }
            }
        }
        for done in dones { #expect(wait28b(done, 15), "a caller neither entered nor gave up within 15 s") }
        release.signal()
        #expect(wait28b(holding, 10))
        let waits = results.current.map(\.1).sorted()
        #expect(results.current.allSatisfy { isUnavailable28b($0.0) }, "\(results.current)")
        // The stopped process took no turn for the whole time: each call should end after about
        // the limit (generous slack for a loaded machine).
        #expect((waits.last ?? 0) < limit * 2.5, "waits: \(waits.map { String(format: "%.2f", $0) })")
    }

    @Test("Adversary28b: a foreign process holding a shared lock forever: unavailable (typed), no hang")
    func sharedLockHolderGivesUp() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.4)
        try store.withExclusiveAccess {}
        let descriptor = open(folder.path("session.json.lock"), O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_SH) == 0)
        let result = Box28b("")
        let done = onThread28b { result.with { $0 = outcome28b { try store.withExclusiveAccess {} } } }
        #expect(wait28b(done, 10), "hung")
        #expect(isUnavailable28b(result.current), "\(result.current)")
        #expect(try store.withExclusiveAccessIfAvailable { 1 } == nil)
    }

    @Test(
        "Adversary28b: the lock file replaced (unlinked and made anew) under an instance: it takes the new file's lock"
    )
    func replacedLockFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let old = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.4)
        try old.withExclusiveAccess {}  // opens the lock file, and keeps it open
        let lockPath = folder.path("session.json.lock")
        #expect(unlink(lockPath) == 0)
        // The replacement is made by another party (a newcomer), which holds it.
        let newcomer = FileSessionStore(directory: folder.url)
        let inside = Box28b(0)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = onThread28b {
            try? newcomer.withExclusiveAccess {
                inside.with { $0 += 1 }
                entered.signal()
                _ = release.wait(timeout: .now() + 15)
                inside.with { $0 -= 1 }
            }
        }
        #expect(wait28b(entered, 10))
        let overlap = Box28b(false)
        let available: Void? = try old.withExclusiveAccessIfAvailable { overlap.with { $0 = inside.current != 0 } }
        #expect(available == nil, "entered while the newcomer holds the new lock file")
        let result = Box28b("")
        let waiting = onThread28b {
            result.with {
                $0 = outcome28b { try old.withExclusiveAccess { overlap.with { $0 = $0 || inside.current != 0 } } }
            }
        }
        #expect(wait28b(waiting, 10))
        #expect(isUnavailable28b(result.current), "\(result.current)")
        #expect(!overlap.current, "the old instance ran while the newcomer was inside")
        release.signal()
        #expect(wait28b(holding, 10))
        try old.withExclusiveAccess {}
    }

    @Test(
        "Adversary28b: a file renamed over the lock file: the instance that had the old one open takes the new one's lock"
    )
    func lockFileRenamedOver() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let old = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.4)
        try old.withExclusiveAccess {}
        let lockPath = folder.path("session.json.lock")
        let replacement = folder.path("replacement")
        let made = open(replacement, O_RDWR | O_CREAT, 0o600)
        try #require(made >= 0)
        close(made)
        #expect(rename(replacement, lockPath) == 0)
        // A foreign holder of the new file (another process, as an open file description).
        let descriptor = open(lockPath, O_RDWR)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX) == 0)
        #expect(try old.withExclusiveAccessIfAvailable { 1 } == nil, "the old descriptor's lock was taken instead")
        flock(descriptor, LOCK_UN)
        #expect(try old.withExclusiveAccessIfAvailable { 1 } == 1)
    }

    @Test(
        "Adversary28b: the store folder renamed away and made anew: both instances meet at the new folder's lock file"
    )
    func folderReplaced() throws {
        let parent = try TemporaryFolder()
        defer { parent.remove() }
        let folderURL = parent.url.appendingPathComponent("store", isDirectory: true)
        try FileManager.default.createDirectory(at: folderURL, withIntermediateDirectories: true)
        chmod(folderURL.path, 0o700)
        let first = FileSessionStore(directory: folderURL, exclusiveAccessWaitLimit: 0.4)
        let second = FileSessionStore(directory: folderURL, exclusiveAccessWaitLimit: 0.4)
        try first.withExclusiveAccess {}
        try second.withExclusiveAccess {}
        #expect(rename(folderURL.path, parent.path("store-old")) == 0)
        #expect(mkdir(folderURL.path, 0o700) == 0)
        // The first holds (it must open the new folder's lock file); the second must not enter.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = onThread28b {
            try? first.withExclusiveAccess {
                entered.signal()
                _ = release.wait(timeout: .now() + 15)
            }
        }
        #expect(wait28b(entered, 10))
        #expect(FileManager.default.fileExists(atPath: folderURL.appendingPathComponent("session.json.lock").path))
        #expect(try second.withExclusiveAccessIfAvailable { 1 } == nil, "entered on the renamed folder's lock file")
        release.signal()
        #expect(wait28b(holding, 10))
        // Renamed away and not made anew: the access makes the folder again, privately.
        #expect(rename(folderURL.path, parent.path("store-old2")) == 0)
        try first.withExclusiveAccess {}
        var info = stat()
        #expect(stat(folderURL.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(try second.withExclusiveAccessIfAvailable { 1 } == 1)
    }

    // MARK: - Hostile lock files

    /// A fresh folder whose lock file `prepare` makes; the outcome of an access (on a thread, with
    /// a safety net) and of one more.
    private func accessWithHostileLockFile(_ prepare: (String, TemporaryFolder) throws -> Void) throws -> [String] {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try prepare(folder.path("session.json.lock"), folder)
        let store = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.5)
        let results = Box28b<[String]>([])
        let done = onThread28b {
            let first = outcome28b { try store.withExclusiveAccess { try store.save(Self.session) } }
            let second = outcome28b { _ = try store.withExclusiveAccessIfAvailable { try store.load() } }
            results.with { $0 = [first, second] }
        }
        #expect(wait28b(done, 15), "hung on a hostile lock file")
        return results.current
    }

    private static let session = ManagedSession(
        accessToken: "access-adversary28b",
        refreshToken: "refresh-adversary28b",
        tokenType: "Bearer",
        expiresAt: Date().timeIntervalSince1970 + 3600,
        issuedAt: Date().timeIntervalSince1970,
        user: ManagedUser(identifier: "adv28b", name: nil, email: nil)
    )

    private func writeBytes(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, mode)
        try #require(descriptor >= 0)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fchmod(descriptor, mode)
        close(descriptor)
    }

    @Test(
        "Adversary28b: truncated, short, garbage, wrapped-count and huge (sparse) lock files are used",
        arguments: [0, 3, 8, 15, 16, 17, 4096]
    )
    func oddSizes(size: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let results = try accessWithHostileLockFile { path, _ in
            var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if size >= 16 {
                // turns at its maximum, asked set: the next turn wraps the count.
                for index in 0..<8 { bytes[index] = 0xFF }
            }
            try writeBytes(bytes, to: path)
        }
        #expect(results == ["entered", "entered"], "\(results)")
    }

    @Test("Adversary28b: a 4 GiB sparse lock file is used")
    func hugeSparse() throws {
        let results = try accessWithHostileLockFile { path, _ in
            let descriptor = open(path, O_RDWR | O_CREAT, 0o600)
            try #require(descriptor >= 0)
            #expect(ftruncate(descriptor, 4 << 30) == 0)
            close(descriptor)
        }
        #expect(results == ["entered", "entered"], "\(results)")
    }

    @Test(
        "Adversary28b: a lock file that is a link, a folder, a FIFO, a socket, public, or another user's: a typed error, no hang",
        arguments: [
            "symlink", "dangling symlink", "symlink to /dev/zero", "directory", "fifo", "socket", "mode 0644",
            "mode 0606", "foreign owner",
        ]
    )
    func refusedKinds(kind: String) throws {
        let results = try accessWithHostileLockFile { path, folder in
            switch kind {
            case "symlink":
                try writeBytes([], to: folder.path("target"))
                #expect(symlink(folder.path("target"), path) == 0)
            case "dangling symlink":
                #expect(symlink(folder.path("nowhere"), path) == 0)
            case "symlink to /dev/zero":
                #expect(symlink("/dev/zero", path) == 0)
            case "directory":
                #expect(mkdir(path, 0o700) == 0)
            case "fifo":
                #expect(mkfifo(path, 0o600) == 0)
            case "socket":
                let socketDescriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                let pathBytes = Array(path.utf8)
                try #require(pathBytes.count < MemoryLayout.size(ofValue: address.sun_path))
                withUnsafeMutableBytes(of: &address.sun_path) { raw in
                    for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
                }
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
                #expect(bound == 0)
                close(socketDescriptor)
            case "mode 0644":
                try writeBytes([], to: path, mode: 0o644)
            case "mode 0606":
                try writeBytes([], to: path, mode: 0o606)
            case "foreign owner":
                try writeBytes([], to: path)
                if getuid() == 0 { #expect(chown(path, 54_321, 54_321) == 0) }
            default:
                Issue.record("unknown kind")
            }
        }
        #expect(results.count == 2)
        if kind == "foreign owner" && getuid() != 0 { return }
        for result in results {
            #expect(result.hasPrefix("SessionStoreError: "), "\(kind): \(result)")
            #expect(!result.contains("held"), "\(kind): \(result)")
        }
    }

    @Test("Adversary28b: the lock file replaced by a symbolic link after the instance opened it: refused, not followed")
    func replacedBySymlinkAfterOpen() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.4)
        try store.withExclusiveAccess {}
        let lockPath = folder.path("session.json.lock")
        try writeBytes([], to: folder.path("target"))
        #expect(unlink(lockPath) == 0)
        #expect(symlink(folder.path("target"), lockPath) == 0)
        let result = outcome28b { try store.withExclusiveAccess {} }
        #expect(result.hasPrefix("SessionStoreError: "), "\(result)")
        // Repaired: used again.
        #expect(unlink(lockPath) == 0)
        #expect(outcome28b { try store.withExclusiveAccess {} } == "entered")
    }
}
