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

/// The mode bits of what is at `path` (not following a link).
private func mode(_ path: String) -> UInt32 {
    var info = stat()
    lstat(path, &info)
    return UInt32(info.st_mode) & 0o7777
}

/// The bytes of the file at `path`, or `nil`.
private func bytes(_ path: String) -> Data? {
    FileManager.default.contents(atPath: path)
}

@Suite("FileSessionStore")
struct FileSessionStoreTests {

    @Test("save, load and remove round-trip; the folder is 0700 and the file 0600")
    func roundTrip() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let directory = folder.url.appendingPathComponent("app/sessions", isDirectory: true)
        let store = FileSessionStore(directory: directory)
        #expect(try store.load() == nil, "nothing stored yet, the folder does not even exist")

        try store.save(sampleSession(counter: 1))
        #expect(mode(directory.path) == 0o700)
        #expect(mode(store.fileURL.path) == 0o600)
        #expect(try store.load() == sampleSession(counter: 1))

        try store.save(sampleSession(counter: 2))
        #expect(try store.load() == sampleSession(counter: 2))
        #expect(
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).allSatisfy {
                !$0.contains(".tmp-")
            },
            "no temporary file is left behind"
        )

        try store.remove()
        #expect(try store.load() == nil)
        try store.remove()  // nothing to remove is fine
    }

    @Test("the default folder is under XDG_DATA_HOME or ~/.local/share on Linux")
    func defaultFolder() throws {
        let url = try FileSessionStore.defaultDirectory(applicationName: "com.example.test")
        #if os(Linux)
        let environment = ProcessInfo.processInfo.environment
        let expected =
            environment["XDG_DATA_HOME"].map { "\($0)/com.example.test" }
            ?? "\(environment["HOME"] ?? "")/.local/share/com.example.test"
        #expect(url.path == URL(fileURLWithPath: expected).path)
        #endif
        #expect(url.lastPathComponent == "com.example.test")
    }

    @Test("errors name paths and reasons, never a token")
    func errorsHideTokens() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        try store.save(sampleSession())
        // Cut the file in the middle of a token.
        let data = try #require(bytes(store.fileURL.path))
        let cut = data.prefix(data.count / 2)
        try cut.write(to: store.fileURL)
        chmod(store.fileURL.path, 0o600)
        #expect {
            try store.load()
        } throws: { error in
            guard let error = error as? SessionStoreError, case .corrupt = error else { return false }
            return !"\(error)".contains("secret") && !(error.errorDescription ?? "").contains("secret")
        }
    }

    // MARK: - Hostile files

    /// Puts `contents` where the session file goes (mode 0600), loads, and checks the error and
    /// that the bytes survive (moved aside, for corrupt data).
    private func expectCorrupt(_ contents: Data, reason: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        _ = FileManager.default.createFile(atPath: store.fileURL.path, contents: contents)
        chmod(store.fileURL.path, 0o600)
        var setAside: String?
        #expect {
            try store.load()
        } throws: { error in
            guard case .corrupt(let found, let path)? = error as? SessionStoreError else { return false }
            setAside = path
            return found.contains(reason)
        }
        let path = try #require(setAside, "the corrupt bytes were moved aside")
        #expect(bytes(path) == contents, "the original bytes are kept")
        #expect(bytes(store.fileURL.path) == nil, "and no longer in the way")
        // Until the next save or removal, a load still reports the bytes set aside (a process
        // that hears the set-aside reads it as unreadable, not as a sign-out elsewhere).
        #expect {
            try store.load()
        } throws: { error in
            guard case .corrupt(_, let again)? = error as? SessionStoreError else { return false }
            return again == path
        }
        try store.save(sampleSession())
        #expect(try store.load() == sampleSession(), "the next save starts afresh")
    }

    @Test("a truncated file is corrupt; its bytes are kept aside")
    func truncated() throws {
        let encoded = SessionFormat.encode(sampleSession())
        try expectCorrupt(encoded.prefix(encoded.count - 20), reason: "not JSON")
    }

    @Test("an empty file is corrupt")
    func empty() throws {
        try expectCorrupt(Data(), reason: "empty")
    }

    @Test("a file that is not JSON is corrupt")
    func notJSON() throws {
        try expectCorrupt(Data("definitely not json".utf8), reason: "not JSON")
    }

    @Test("JSON of the wrong shape is corrupt")
    func wrongShape() throws {
        try expectCorrupt(
            Data(#"{"format":"AuthSessionKit.session","version":1,"session":{"user":3}}"#.utf8),
            reason: "missing field"
        )
        try expectCorrupt(Data("[1,2,3]".utf8), reason: "wrong type")
    }

    @Test("100 MB of noise is corrupt, read no further than the size limit, and kept")
    func hugeNoise() throws {
        var generator = SeededRandomNumberGenerator(seed: UInt64.random(in: 0...UInt64.max))
        var noise = Data(count: 100 << 20)
        noise.withUnsafeMutableBytes { buffer in
            for index in stride(from: 0, to: buffer.count, by: 8) {
                buffer.storeBytes(of: generator.next(), toByteOffset: index, as: UInt64.self)
            }
        }
        try expectCorrupt(noise, reason: "larger than")
    }

    @Test("a file from a newer format version is refused and left in place")
    func futureVersion() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let contents = Data(#"{"format":"AuthSessionKit.session","version":99,"session":{"new":"shape"}}"#.utf8)
        _ = FileManager.default.createFile(atPath: store.fileURL.path, contents: contents)
        chmod(store.fileURL.path, 0o600)
        #expect(throws: SessionStoreError.unsupportedFormatVersion(found: 99, newestSupported: 2)) {
            try store.load()
        }
        #expect(bytes(store.fileURL.path) == contents, "not moved, not overwritten")
    }

    @Test("a symbolic link in place of the file is never followed: not read, not replaced, not removed")
    func symbolicLink() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let target = folder.path("elsewhere.json")
        let original = SessionFormat.encode(sampleSession(counter: 9))
        _ = FileManager.default.createFile(atPath: target, contents: original)
        chmod(target, 0o600)
        symlink(target, store.fileURL.path)

        #expect(throws: SessionStoreError.symbolicLink(path: store.fileURL.path)) { try store.load() }
        #expect(throws: SessionStoreError.symbolicLink(path: store.fileURL.path)) { try store.save(sampleSession()) }
        #expect(throws: SessionStoreError.symbolicLink(path: store.fileURL.path)) { try store.remove() }
        #expect(bytes(target) == original, "the link's target is untouched")
        var info = stat()
        #expect(lstat(store.fileURL.path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link is still there")
    }

    @Test("a symbolic link in place of the folder is refused")
    func symbolicLinkFolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let real = folder.url.appendingPathComponent("real", isDirectory: true)
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
        chmod(real.path, 0o700)
        let link = folder.url.appendingPathComponent("link", isDirectory: true)
        symlink(real.path, link.path)
        let store = FileSessionStore(directory: link)
        #expect(throws: SessionStoreError.symbolicLink(path: link.path)) { try store.load() }
        #expect(throws: SessionStoreError.symbolicLink(path: link.path)) { try store.save(sampleSession()) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: real.path).isEmpty)
    }

    @Test("a 0644 file is refused, with its mode, and neither read into a session nor overwritten")
    func worldReadableFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let original = SessionFormat.encode(sampleSession(counter: 3))
        _ = FileManager.default.createFile(atPath: store.fileURL.path, contents: original)
        chmod(store.fileURL.path, 0o644)
        let refusal = SessionStoreError.insecurePermissions(path: store.fileURL.path, mode: 0o100644)
        #expect(throws: refusal) { try store.load() }
        #expect(throws: refusal) { try store.save(sampleSession()) }
        #expect(bytes(store.fileURL.path) == original)
        #expect(refusal.description.contains("644"), "the developer's detail names the mode")
    }

    @Test("a folder other users can read is refused")
    func groupReadableFolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        chmod(folder.url.path, 0o750)
        let store = FileSessionStore(directory: folder.url)
        #expect(throws: SessionStoreError.insecurePermissions(path: folder.url.path, mode: 0o40750)) {
            try store.load()
        }
        #expect(throws: SessionStoreError.insecurePermissions(path: folder.url.path, mode: 0o40750)) {
            try store.save(sampleSession())
        }
    }

    @Test("a file that belongs to another user is refused", .enabled(if: Worker.isRoot))
    func foreignOwner() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        try store.save(sampleSession())
        chown(store.fileURL.path, 65534, 65534)
        #expect(throws: SessionStoreError.foreignOwner(path: store.fileURL.path, owner: 65534)) { try store.load() }
    }

    @Test("an unwritable folder: the save fails with its errno, the stored session stays")
    func unwritableFolder() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        try store.save(sampleSession(counter: 1))
        let original = bytes(store.fileURL.path)
        chmod(folder.url.path, 0o500)
        if Worker.isRoot {
            // Root ignores permissions: the writer is the worker, as an unprivileged user that
            // owns the folder.
            chown(folder.url.path, 65534, 65534)
            chown(store.fileURL.path, 65534, 65534)
            let printed = try await onOwnThread {
                let worker = try WorkerProcess(["as-user", "65534", "65534", "save", folder.url.path, "2"])
                let lines = worker.remainingLines()
                _ = worker.wait()
                return lines
            }
            #expect(printed.first?.contains("Permission denied") == true, "\(printed)")
        } else {
            #expect {
                try store.save(sampleSession(counter: 2))
            } throws: { error in
                guard case .io(let operation, _, let code)? = error as? SessionStoreError else { return false }
                return operation == "open" && code == EACCES
            }
        }
        #expect(bytes(store.fileURL.path) == original, "the stored session is intact")
    }

    @Test("a lock file that is a link or not private is refused")
    func hostileLockFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let lockPath = store.fileURL.path + ".lock"
        symlink(folder.path("elsewhere"), lockPath)
        #expect(throws: SessionStoreError.symbolicLink(path: lockPath)) {
            try store.withExclusiveAccess {}
        }
        unlink(lockPath)
        _ = FileManager.default.createFile(atPath: lockPath, contents: nil)
        chmod(lockPath, 0o666)
        #expect(throws: SessionStoreError.insecurePermissions(path: lockPath, mode: 0o100666)) {
            try store.withExclusiveAccess {}
        }
    }

    // MARK: - Exclusive access

    @Test("8 threads each do 250 exclusive read-modify-write increments: the counter ends at 2,000")
    func exclusiveAcrossThreads() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        try store.save(sampleSession(counter: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await onOwnThread {
                        for _ in 0..<250 {
                            try store.withExclusiveAccess {
                                guard var session = try store.load() else {
                                    throw SessionStoreError.corrupt(reason: "lost", setAsideAt: nil)
                                }
                                let counter = Int(session.user.profile["n"] ?? "0") ?? 0
                                session.user.profile["n"] = "\(counter + 1)"
                                try store.save(session)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.load()?.user.profile["n"] == "2000")
    }

    @Test("4 processes each do 500 exclusive read-modify-write increments: the counter ends at 2,000")
    func exclusiveAcrossProcesses() async throws {
        try #require(Worker.url != nil, "the SessionStoreWorker executable is built with the tests")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let statuses = try await onOwnThread {
            let workers = try (0..<4).map { _ in try WorkerProcess(["increment", folder.url.path, "500"]) }
            return workers.map { worker in
                let lines = worker.remainingLines()
                return (worker.wait(), lines)
            }
        }
        for (status, lines) in statuses {
            #expect(status == 0 && lines == ["done"], "\(lines)")
        }
        let stored = try FileSessionStore(directory: folder.url).load()
        #expect(stored?.user.profile["counter"] == "2000")
    }

    // MARK: - Crash safety

    @Test(
        "a writer killed with SIGKILL at random moments, 300 times: the file always holds the session before or the one being written"
    )
    func crashSafety() async throws {
        try #require(Worker.url != nil, "the SessionStoreWorker executable is built with the tests")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        try store.save(
            ManagedSession(
                accessToken: "access-0",
                expiresAt: 1_800_003_600,
                issuedAt: 1_800_000_000,
                user: ManagedUser(identifier: "worker", profile: ["counter": "0"])
            )
        )
        let kills = 300
        let problems = try await onOwnThread { () -> [String] in
            var problems: [String] = []
            var random = SystemRandomNumberGenerator()
            for round in 0..<kills {
                let worker = try WorkerProcess(["save-loop", folder.url.path])
                var lines: [String] = []
                let savesBeforeKill = Int.random(in: 1...4, using: &random)
                while lines.filter({ $0.hasPrefix("saved") }).count < savesBeforeKill, let line = worker.readLine() {
                    lines.append(line)
                }
                // A little more, of random length, so the kill lands anywhere in a save.
                var spin = 0
                for _ in 0..<Int.random(in: 0...20_000, using: &random) { spin &+= 1 }
                worker.kill()
                lines += worker.remainingLines()
                let numbers = { (prefix: String) in
                    lines.compactMap { $0.hasPrefix(prefix) ? Int($0.dropFirst(prefix.count)) : nil }
                }
                let lastSaved = numbers("saved ").last ?? 0
                let lastWriting = numbers("writing ").last ?? 0
                do {
                    let counter = Int(try store.load()?.user.profile["counter"] ?? "")
                    if counter != lastSaved && counter != lastWriting {
                        problems.append(
                            "round \(round): loaded \(counter.map(String.init) ?? "nothing"), expected \(lastSaved) or \(lastWriting)"
                        )
                    }
                } catch {
                    problems.append("round \(round): \(error)")
                }
                _ = spin
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}

@Suite("What killed saves leave behind")
struct KilledSaveLeftoversTests {

    /// The names of the files in `folder` whose bytes hold `needle`.
    private func leftovers(in folder: TemporaryFolder, holding needle: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { name in
            guard let data = FileManager.default.contents(atPath: folder.url.appendingPathComponent(name).path) else {
                return false
            }
            return String(decoding: data, as: UTF8.self).contains(needle)
        }
    }

    @Test(
        "saves killed with SIGKILL mid-write leave files holding tokens; the next save clears those of dead processes and a sign-out leaves no token in the folder"
    )
    func killedSavesLeaveNoTokenAfterSignOut() async throws {
        try #require(Worker.url != nil, "the SessionStoreWorker executable is built with the tests")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        // Kills writers until one leaves its new file behind, with bytes (each kill lands anywhere in a save;
        // with fsync a save spends much of its time with its new file written).
        let killUntilLeftBehind: @Sendable () throws -> [String] = {
            for _ in 0..<400 {
                let worker = try WorkerProcess(["save-loop", folder.url.path])
                var saved = 0
                while saved < 2, let line = worker.readLine() {
                    if line.hasPrefix("saved") { saved += 1 }
                }
                worker.kill()
                _ = worker.remainingLines()
                _ = worker.wait()
                let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
                    let size = try? FileManager.default.attributesOfItem(
                        atPath: folder.url.appendingPathComponent($0).path
                    )[.size]
                    return $0.contains(".tmp-") && ((size as? NSNumber)?.intValue ?? 0) > 0
                }
                if !left.isEmpty { return left }
            }
            return []
        }
        let left = try await onOwnThread(killUntilLeftBehind)
        try #require(!left.isEmpty, "a kill left a new file behind, as the reviewers saw")

        try store.save(
            ManagedSession(
                accessToken: "fresh",
                expiresAt: 1_800_003_600,
                issuedAt: 1_800_000_000,
                user: ManagedUser(identifier: "worker")
            )
        )
        for name in left {
            #expect(
                !FileManager.default.fileExists(atPath: folder.url.appendingPathComponent(name).path),
                "a save clears what dead processes left: \(name)"
            )
        }

        // Leave one behind again, then sign out: nothing in the folder holds a token.
        let leftAgain = try await onOwnThread(killUntilLeftBehind)
        try #require(!leftAgain.isEmpty)
        try store.remove()
        #expect(try leftovers(in: folder, holding: "access-").isEmpty)
        #expect(try leftovers(in: folder, holding: "fresh").isEmpty)
        // A writer killed between creating its file and its first byte leaves an empty one
        // (no token), which goes a second later.
        let afterSignOut = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        for name in afterSignOut where name.contains(".tmp-") {
            let size = try FileManager.default.attributesOfItem(atPath: folder.url.appendingPathComponent(name).path)[
                .size
            ]
            #expect((size as? NSNumber)?.intValue == 0, "\(name) holds bytes")
        }
    }

    @Test(
        "a new file its writer still holds is left alone; one nobody holds that holds bytes goes at once, whatever process it names (another PID namespace's pid 1)"
    )
    func heldFileIsKeptAbandonedOneGoes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        // A live writer mid-save, in this process and in another (pid 1): each holds its lock.
        let mine = folder.url.appendingPathComponent(".session.json.tmp-\(getpid())-9-1").path
        let others = folder.url.appendingPathComponent(".session.json.tmp-1-1-1").path
        // A writer killed in another PID namespace, where it was pid 1: nobody holds its file.
        let abandoned = folder.url.appendingPathComponent(".session.json.tmp-1-2-2").path
        let staleLease = folder.url.appendingPathComponent("session.json.lease.tmp-1-2").path
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        for path in [mine, others, abandoned, staleLease] {
            #expect(FileManager.default.createFile(atPath: path, contents: Data("access-x".utf8)))
            chmod(path, 0o600)
        }
        for path in [mine, others] {
            let descriptor = open(path, O_RDONLY)
            #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
            held.append(descriptor)
        }
        let old = Date(timeIntervalSinceNow: -(FileSessionStore.abandonedFileAge + 60))
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: staleLease)
        try store.remove()
        #expect(FileManager.default.fileExists(atPath: mine), "a save in flight here keeps its file")
        #expect(FileManager.default.fileExists(atPath: others), "so does one in flight in another process")
        #expect(!FileManager.default.fileExists(atPath: abandoned), "a dead writer's file goes at once")
        #expect(!FileManager.default.fileExists(atPath: staleLease), "a lease's new file older than any save goes")
    }

    @Test("a sign-out deletes the unreadable bytes set aside for inspection: they may hold tokens")
    func signOutDeletesSetAsideBytes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let truncated = SessionFormat.encode(sampleSession()).dropLast(20)
        #expect(FileManager.default.createFile(atPath: store.fileURL.path, contents: truncated))
        chmod(store.fileURL.path, 0o600)
        var setAside: String?
        #expect {
            try store.load()
        } throws: { error in
            guard case .corrupt(_, let path)? = error as? SessionStoreError else { return false }
            setAside = path
            return true
        }
        let path = try #require(setAside)
        #expect(FileManager.default.fileExists(atPath: path), "kept for inspection")
        try store.remove()
        #expect(!FileManager.default.fileExists(atPath: path), "until the sign-out")
        #expect(try store.load() == nil)
    }
}
