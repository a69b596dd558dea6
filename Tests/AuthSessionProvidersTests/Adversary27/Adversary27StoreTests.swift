import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a load found: "session", "none", "left" (corrupt, left in place), "moved" (corrupt, set
/// aside), or another error.
private func outcome(of store: FileSessionStore) -> String {
    do throws(SessionStoreError) {
        return try store.load() == nil ? "none" : "session"
    } catch {
        if case .corrupt(_, let setAsideAt) = error { return setAsideAt == nil ? "left" : "moved" }
        return "\(error)"
    }
}

/// Runs `body` on a thread of its own and waits for it without blocking a task's thread.
private func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Promise 1: unreadable bytes are moved aside only inside the store's exclusive access (held by
/// the calling thread, or free at once); otherwise left in place, `.corrupt(setAsideAt: nil)`.
@Suite("Adversary27: corrupt bytes are set aside only inside the exclusive access")
struct Adversary27StoreTests {

    private static func session(_ token: String) -> ManagedSession {
        ManagedSession(
            accessToken: "at-\(token)",
            refreshToken: "rt-\(token)",
            expiresAt: 2e9,
            issuedAt: 1e9,
            user: alice,
            lineage: "lineage-\(token)"
        )
    }

    /// Replaces the session file with `bytes` the way a foreign writer would (a rename: a new inode).
    private static func writeRaw(_ bytes: String, in folder: TemporaryFolder) {
        let file = folder.path("session.json")
        let scratch = folder.path(".adv27-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: scratch, contents: Data(bytes.utf8))
        chmod(scratch, 0o600)
        _ = rename(scratch, file)
    }

    private static let garbage = #"{"format":"AuthSessionKit.session","version":2,"sess"#

    private static func fileBytes(_ folder: TemporaryFolder) -> String? {
        FileManager.default.contents(atPath: folder.path("session.json")).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Holds `store`'s exclusive access on a thread of its own (another process, as far as the
    /// lock file can tell when `store` is a second instance) until `release` is called.
    private final class Holder: @unchecked Sendable {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)

        init(_ store: FileSessionStore) {
            let thread = Thread { [held, release, done] in
                _ = try? store.withExclusiveAccess {
                    held.signal()
                    release.wait()
                }
                done.signal()
            }
            thread.start()
        }
    }

    @Test(
        "a second store instance on the same folder, used inside the first's exclusive access on the same thread: no deadlock, left in place (setAsideAt nil); the holder's own load moves it"
    )
    func secondInstanceInsideTheAccess() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let second = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        try first.save(Self.session("a"))
        Self.writeRaw(Self.garbage, in: folder)
        try first.withExclusiveAccess {
            #expect(outcome(of: second) == "left", "another instance (another process, to the lock file) moved it")
            #expect(
                Self.fileBytes(folder) == Self.garbage,
                "the bytes were moved by a load that did not hold the access"
            )
            #expect(outcome(of: first) == "moved", "the holder's own load did not set the bytes aside")
        }
        // Set aside: every instance reads the set-aside, never "no session".
        #expect(throws: SessionStoreError.self) { try second.load() }
    }

    @Test(
        "a load on another thread of this process while this instance's access is held: left in place, never blocks"
    )
    func anotherThreadOfTheHolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        try store.save(Self.session("a"))
        Self.writeRaw(Self.garbage, in: folder)
        let result = ConcurrencySafeContainer<String?>(nil)
        try store.withExclusiveAccess {
            let finished = DispatchSemaphore(value: 0)
            let thread = Thread {
                let found = outcome(of: store)
                result.withLock { $0 = found }
                finished.signal()
            }
            thread.start()
            #expect(
                finished.wait(timeout: .now() + 300) == .success,
                "the other thread's load blocked on the held access"
            )
        }
        #expect(result.withLock { $0 } == "left")
        #expect(Self.fileBytes(folder) == Self.garbage)
    }

    @Test(
        "a Task started inside the exclusive access (it inherits task-locals) loads later, while another process holds the access: the bytes must stay in place"
    )
    func taskStartedInsideTheAccessDoesNotInheritIt() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let otherProcess = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        try store.save(Self.session("a"))
        let go = AsyncGate()
        let child = ConcurrencySafeContainer<Task<String, Never>?>(nil)
        try store.withExclusiveAccess {
            // An app's read-modify-write that hands later work to a task.
            let task = Task {
                await go.wait()
                return outcome(of: store)
            }
            child.withLock { $0 = task }
        }
        // The access is released. Another process takes it, and the file is unreadable meanwhile.
        let holder = Holder(otherProcess)
        #expect(await onThread { holder.held.wait(timeout: .now() + 300) } == .success)
        Self.writeRaw(Self.garbage, in: folder)
        go.open()
        let found = await child.withLock { $0 }!.value
        let bytesWhileHeld = Self.fileBytes(folder)
        holder.release.signal()
        _ = await onThread { holder.done.wait(timeout: .now() + 30) }
        #expect(
            found == "left",
            "a load outside the access (another process holds it) moved the bytes: the task inherited 'held'"
        )
        #expect(bytesWhileHeld == Self.garbage, "the session file was moved while another process held the access")
    }

    @Test(
        "race, 300 rounds: two instances, loads on three threads outside the access while a 'process' corrupts the file and writes back inside its access; no load ever sees no session, and no write-back is ever moved away",
        .disabled(
            if: isThreadSanitized,
            "four threads at full speed for minutes under TSan starve the suite; plain swift test runs it"
        )
    )
    func raceOfLoadsAndWriteBacks() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let writer = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let other = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        try writer.save(Self.session("0"))
        let stop = ConcurrencySafeContainer(false)
        let failures = ConcurrencySafeContainer<[String]>([])
        let readersDone = DispatchGroup()
        for (index, reader) in [other, writer, other].enumerated() {
            readersDone.enter()
            Thread {
                while !stop.withLock({ $0 }) {
                    let found = outcome(of: reader)
                    if found != "session" && found != "left" && found != "moved" {
                        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.url.path)) ?? []
                        failures.withLock { $0.append("reader \(index): \(found) \(names.sorted())") }
                    }
                }
                readersDone.leave()
            }.start()
        }
        let writerDone = DispatchSemaphore(value: 0)
        Thread {
            for round in 1...300 {
                Self.writeRaw(Self.garbage, in: folder)
                let good = Self.session("\(round)")
                do {
                    try writer.withExclusiveAccess {
                        // A write-back: the process still has the session.
                        _ = try? writer.load()
                        try writer.save(good)
                    }
                    // Whatever the readers were doing, the write-back stays.
                    let loaded = try writer.load()
                    if loaded != good {
                        failures.withLock {
                            $0.append("round \(round): the write-back is gone: \(String(describing: loaded))")
                        }
                    }
                } catch let error {
                    failures.withLock { $0.append("round \(round): \(error)") }
                }
            }
            writerDone.signal()
        }.start()
        #expect(await onThread { writerDone.wait(timeout: .now() + 300) } == .success)
        stop.withLock { $0 = true }
        #expect(await onThread { readersDone.wait(timeout: .now() + 300) } == .success)
        let seen = failures.withLock { $0 }
        let signOuts = seen.filter { $0.hasPrefix("reader") }
        let lostWriteBacks = seen.filter { $0.hasPrefix("round") }
        #expect(
            signOuts.isEmpty,
            "a load read the set-aside as no session: \(signOuts.prefix(3)) (\(signOuts.count) in all)"
        )
        #expect(lostWriteBacks.isEmpty, "\(lostWriteBacks.prefix(3)) (\(lostWriteBacks.count) in all)")
        #expect(try writer.load() == Self.session("300"))
    }
}
