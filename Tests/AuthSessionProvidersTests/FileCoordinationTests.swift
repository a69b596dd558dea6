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

@Suite("File store coordination: a lock file that stays a lock, leases on disk, change notices")
struct FileCoordinationTests {

    /// Whether the lock file now at `path` is locked by someone: a fresh descriptor's non-blocking
    /// `flock` fails with `EWOULDBLOCK`.
    private func isLocked(_ path: String) -> Bool {
        let descriptor = open(path, O_RDWR)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    @Test("a lock file replaced while a store holds the old one open: the store locks the new one, so a newcomer waits")
    func replacedLockFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let longRunning = FileSessionStore(directory: folder.url)
        let lockPath = folder.path("session.json.lock")
        try longRunning.withExclusiveAccess {}  // opens the lock file and keeps it open
        // Something replaces the lock file (a cleanup, a restore from a backup).
        let replacement = folder.path("replacement")
        #expect(FileManager.default.createFile(atPath: replacement, contents: nil))
        chmod(replacement, 0o600)
        #expect(rename(replacement, lockPath) == 0)

        let lockedWhileInside = try longRunning.withExclusiveAccess { isLocked(lockPath) }
        #expect(lockedWhileInside, "the long-running store holds the file at the path, not the replaced one")
        #expect(!isLocked(lockPath), "and releases it")
    }

    @Test(
        "the store's folder replaced while a store holds the old lock file open: the new folder's lock is the one taken"
    )
    func replacedFolder() throws {
        let parent = try TemporaryFolder()
        defer { parent.remove() }
        let folderURL = parent.url.appendingPathComponent("store", isDirectory: true)
        let store = FileSessionStore(directory: folderURL)
        try store.withExclusiveAccess {}
        #expect(rename(folderURL.path, parent.path("old-store")) == 0)
        let lockedWhileInside = try store.withExclusiveAccess { isLocked(folderURL.path + "/session.json.lock") }
        #expect(lockedWhileInside)
    }

    @Test("a lease is recorded beside the session, read back, and cleared; an unreadable one is no lease")
    func leaseOnDisk() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        #expect(try store.loadLease() == nil)
        let lease = RefreshLease(
            owner: .init(processIdentifier: 4242, instance: "a"),
            startedAt: 1_800_000_000,
            deadline: 1_800_000_120,
            refreshTokenFingerprint: RefreshLease.fingerprint(of: "rt-secret-value")
        )
        try store.withExclusiveAccess { try store.saveLease(lease) }
        #expect(try store.loadLease() == lease)
        let bytes = try String(contentsOfFile: folder.path("session.json.lease"), encoding: .utf8)
        #expect(!bytes.contains("rt-secret-value"), "the lease names the token by its fingerprint only")
        var info = stat()
        #expect(stat(folder.path("session.json.lease"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(!"\(lease)".contains(lease.refreshTokenFingerprint))
        try store.saveLease(nil)
        #expect(try store.loadLease() == nil)
        try Data("{not a lease".utf8).write(to: URL(fileURLWithPath: folder.path("session.json.lease")))
        chmod(folder.path("session.json.lease"), 0o600)
        #expect(try store.loadLease() == nil)
        try Data(#"{"format":"something else","version":1,"lease":{}}"#.utf8)
            .write(to: URL(fileURLWithPath: folder.path("session.json.lease")))
        #expect(try store.loadLease() == nil)
    }

    @Test(
        "a lease file that is a symbolic link, or that others could have written, is no lease, and the next record replaces it"
    )
    func untrustedLeaseFiles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let leasePath = folder.path("session.json.lease")
        let target = folder.path("target")
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        #expect(symlink(target, leasePath) == 0)
        #expect(try store.loadLease() == nil, "a link is not followed")
        let lease = RefreshLease(owner: .inThisProcess(), startedAt: 0, deadline: 1, refreshTokenFingerprint: "f")
        try store.withExclusiveAccess { try store.saveLease(lease) }
        #expect(try store.loadLease() == lease, "the record replaced the link")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep", "not the link's target")
        chmod(leasePath, 0o644)
        #expect(try store.loadLease() == nil, "a lease others could have written is not trusted")
    }

    #if os(Linux)
    @Test("inotify: a save, a removal and a lease by another store instance are each heard")
    func inotifyNotices() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let listener = FileSessionStore(directory: folder.url)
        let writer = FileSessionStore(directory: folder.url)
        let heard = ConcurrencySafeContainer(0)
        let observation = try #require(listener.changeNotifier).observe { heard.withLock { $0 += 1 } }
        defer { observation.cancel() }
        try await waitForWatch(heard: heard, writer: writer)

        let beforeRemoval = heard.withLock { $0 }
        try writer.remove()
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeRemoval }
        let beforeLease = heard.withLock { $0 }
        try writer.withExclusiveAccess {
            try writer.saveLease(
                RefreshLease(owner: .inThisProcess(), startedAt: 0, deadline: 1, refreshTokenFingerprint: "f")
            )
        }
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeLease }
    }

    @Test("inotify: the folder replaced under an observation is watched again")
    func inotifyFolderReplaced() async throws {
        let parent = try TemporaryFolder()
        defer { parent.remove() }
        let folderURL = parent.url.appendingPathComponent("store", isDirectory: true)
        let writer = FileSessionStore(directory: folderURL)
        try writer.save(sampleSession(1))
        let heard = ConcurrencySafeContainer(0)
        let observation = try #require(FileSessionStore(directory: folderURL).changeNotifier).observe {
            heard.withLock { $0 += 1 }
        }
        defer { observation.cancel() }
        try await waitForWatch(heard: heard, writer: writer)
        #expect(rename(folderURL.path, parent.path("old")) == 0)
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > 0 }
        // A new folder at the path: its writes are heard.
        let deadline = Date().addingTimeInterval(10)
        var n = 2
        let before = heard.withLock { $0 }
        while heard.withLock({ $0 }) <= before + 1, Date() < deadline {
            try writer.save(sampleSession(n))
            n += 1
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(heard.withLock { $0 } > before + 1, "writes in the new folder are heard")
    }

    @Test(
        "inotify: after the store's parent folder is renamed, and then the store's folder itself, writes at the store's path are heard again"
    )
    func inotifyParentRenamed() async throws {
        let root = try TemporaryFolder()
        defer { root.remove() }
        let parentURL = root.url.appendingPathComponent("parent", isDirectory: true)
        let folderURL = parentURL.appendingPathComponent("store", isDirectory: true)
        try FileManager.default.createDirectory(at: parentURL, withIntermediateDirectories: false)
        let writer = FileSessionStore(directory: folderURL)
        try writer.save(sampleSession(1))
        let heard = ConcurrencySafeContainer(0)
        let observation = try #require(FileSessionStore(directory: folderURL).changeNotifier).observe {
            heard.withLock { $0 += 1 }
        }
        defer { observation.cancel() }
        try await waitForWatch(heard: heard, writer: writer)

        // The parent is moved away (the watch follows the folder's inode there, and the kernel
        // tells it nothing), and a new parent and store folder take the path: one save there.
        #expect(rename(parentURL.path, root.path("parent-moved")) == 0)
        try FileManager.default.createDirectory(at: parentURL, withIntermediateDirectories: false)
        let beforeParent = heard.withLock { $0 }
        try writer.save(sampleSession(2))
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeParent }

        // Then the store's folder itself is moved away and made again: one save there.
        #expect(rename(folderURL.path, parentURL.appendingPathComponent("store-moved").path) == 0)
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeParent + 1 }
        let beforeFolder = heard.withLock { $0 }
        try writer.save(sampleSession(3))
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeFolder }
    }

    @Test(
        "inotify unavailable (inotify_init1 fails with EMFILE, forced): notices still arrive, by polling, and the observation hears of the fallback once"
    )
    func inotifyUnavailableFallsBackToPolling() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let hub = InotifyHub(
            calls: InotifyCalls(initialize: { (-1, EMFILE) }, addWatch: { _, _, _ in (-1, EBADF) })
        )
        let listener = FileSessionStore(directory: folder.url, safeguarding: .platform) {
            InotifyChangeNotifier(directory: $0, names: $1, hub: hub)
        }
        let writer = FileSessionStore(directory: folder.url)
        let heard = ConcurrencySafeContainer(0)
        let fallbacks = ConcurrencySafeContainer<[SessionChangeNoticeFallback]>([])
        let observation = try #require(listener.changeNotifier).observe(
            { heard.withLock { $0 += 1 } },
            onFallback: { fallback in fallbacks.withLock { $0.append(fallback) } }
        )
        defer { observation.cancel() }

        try writer.save(sampleSession(1))
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > 0 }
        let beforeRemoval = heard.withLock { $0 }
        try writer.remove()
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeRemoval }
        #expect(fallbacks.withLock { $0 } == [.instanceUnavailable(code: EMFILE)], "reported once")
        #expect("\(fallbacks.withLock { $0 }[0])".contains("inotify_init1 failed"))
        #expect(!"\(fallbacks.withLock { $0 }[0])".contains(folder.url.path), "no path")

        // Cancelled, the polling stops: a change is no longer heard.
        observation.cancel()
        let afterCancel = heard.withLock { $0 }
        try writer.save(sampleSession(2))
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(heard.withLock { $0 } == afterCancel)
    }

    @Test(
        "inotify refuses to watch the folder (inotify_add_watch fails with ENOSPC, forced): notices arrive by polling, the fallback is heard once, and the kernel's notices resume once it watches"
    )
    func inotifyWatchRefusedFallsBackToPolling() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let refuses = ConcurrencySafeContainer(true)
        let hub = InotifyHub(
            calls: InotifyCalls(
                initialize: InotifyCalls.system.initialize,
                addWatch: { descriptor, path, mask in
                    refuses.withLock { $0 } ? (-1, ENOSPC) : InotifyCalls.system.addWatch(descriptor, path, mask)
                }
            )
        )
        let listener = FileSessionStore(directory: folder.url, safeguarding: .platform) {
            InotifyChangeNotifier(directory: $0, names: $1, hub: hub)
        }
        let writer = FileSessionStore(directory: folder.url)
        let heard = ConcurrencySafeContainer(0)
        let fallbacks = ConcurrencySafeContainer<[SessionChangeNoticeFallback]>([])
        let observation = try #require(listener.changeNotifier).observe(
            { heard.withLock { $0 += 1 } },
            onFallback: { fallback in fallbacks.withLock { $0.append(fallback) } }
        )
        defer { observation.cancel() }

        try writer.save(sampleSession(1))
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > 0 }
        let beforeRemoval = heard.withLock { $0 }
        try writer.remove()
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeRemoval }

        // The kernel watches again: notices go on (the first says "read again").
        refuses.withLock { $0 = false }
        let beforeWatch = heard.withLock { $0 }
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeWatch }
        let beforeSave = heard.withLock { $0 }
        try writer.save(sampleSession(2))
        try await waitUntil(timeout: 300) { heard.withLock { $0 } > beforeSave }
        #expect(fallbacks.withLock { $0 } == [.watchRefused(code: ENOSPC)], "reported once")
    }

    /// Saves until the observation hears one (its watch is set up on its own thread).
    private func waitForWatch(heard: ConcurrencySafeContainer<Int>, writer: FileSessionStore) async throws {
        let deadline = Date().addingTimeInterval(10)
        var n = 100
        while heard.withLock({ $0 }) == 0 {
            guard Date() < deadline else {
                Issue.record("no notice heard within 10 s")
                throw CancellationError()
            }
            try writer.save(sampleSession(n))
            n += 1
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }
    #endif

    @Test("a notice already dispatched when its observation is cancelled does not run the handler afterwards")
    func gateClosedByCancellation() {
        // notify_cancel does not wait for a handler the Darwin notification center already queued:
        // each delivery asks the observation's gate, which its cancellation closes.
        let gate = ObservationGate()
        let calls = ConcurrencySafeContainer(0)
        gate.deliver { calls.withLock { $0 += 1 } }
        #expect(calls.withLock { $0 } == 1, "open: the handler runs")
        gate.close()
        gate.deliver { calls.withLock { $0 += 1 } }
        gate.deliver { calls.withLock { $0 += 1 } }
        #expect(calls.withLock { $0 } == 1, "closed: no handler runs after the cancellation returned")
    }

    @Test("the default notification name starts with the app group of a macOS group container, else stays the path's")
    func defaultNotificationName() {
        let group = "/Users/ada/Library/Group Containers/ABCDE12345.com.example.shared"
        for path in [group, group + "/Session", group + "/Library/Application Support/Session"] {
            #expect(FileCoordination.appGroupIdentifier(inContainerPath: path) == "ABCDE12345.com.example.shared")
            let name = FileCoordination.defaultNotificationName(directoryPath: path, baseName: "session.json")
            #expect(
                name.hasPrefix("ABCDE12345.com.example.shared."),
                "a sandboxed app may use only such names: \(name)"
            )
            #expect(
                name
                    != FileCoordination.defaultNotificationName(
                        directoryPath: path + "/other",
                        baseName: "session.json"
                    ),
                "still one name per store"
            )
        }
        #expect(
            FileCoordination.defaultNotificationName(
                directoryPath: "/Users/ada/Library/Group Containers/group.com.example.app/Session",
                baseName: "com.example.app.session.keychain"
            ).hasPrefix("group.com.example.app.")
        )
        for path in [
            "/Users/ada/Library/Application Support/com.example.cli",
            "/Users/ada/Library/Group Containers",
            "/Users/ada/Library/Group Containers/",
            "/private/var/mobile/Containers/Shared/AppGroup/3F2504E0-4F89-11D3-9A0C-0305E82C3301/Session",
            "/home/ada/.local/share/Group Containers/x",
            "/srv/Group Containers/ABCDE12345.com.example.shared",
        ] {
            #expect(FileCoordination.appGroupIdentifier(inContainerPath: path) == nil, "\(path)")
            #expect(
                FileCoordination.defaultNotificationName(directoryPath: path, baseName: "session.json")
                    .hasPrefix("authsessionkit.changed."),
                "\(path)"
            )
        }
    }

    @Test("LocalChangeNotifier: every observation hears a post, on its own queue; a cancelled one no more")
    func localNotifier() async throws {
        let notifier = LocalChangeNotifier()
        let first = ConcurrencySafeContainer(0)
        let second = ConcurrencySafeContainer(0)
        let a = notifier.observe { first.withLock { $0 += 1 } }
        let b = notifier.observe { second.withLock { $0 += 1 } }
        notifier.post()
        try await waitUntil(timeout: 300) { first.withLock { $0 } >= 1 && second.withLock { $0 } >= 1 }
        b.cancel()
        let secondBefore = second.withLock { $0 }
        notifier.post()
        try await waitUntil(timeout: 300) { first.withLock { $0 } >= 2 }
        #expect(second.withLock { $0 } == secondBefore)
        a.cancel()
    }

    @Test("PollingChangeNotifier: a change of the signature is a notice")
    func pollingNotifier() async throws {
        let signature = ConcurrencySafeContainer("one")
        let notifier = PollingChangeNotifier(interval: 0.01) { signature.withLock { $0 } }
        let heard = ConcurrencySafeContainer(0)
        let observation = notifier.observe { heard.withLock { $0 += 1 } }
        defer { observation.cancel() }
        signature.withLock { $0 = "two" }
        try await waitUntil(timeout: 300) { heard.withLock { $0 } == 1 }
    }

    @Test(
        "PollingChangeNotifier: after a post, the next poll is a notice even when the signature is back to what it was (a write undone before the poll)"
    )
    func pollingNotifierPost() async throws {
        let signature = ConcurrencySafeContainer("one")
        let notifier = PollingChangeNotifier(interval: 0.01) { signature.withLock { $0 } }
        let heard = ConcurrencySafeContainer(0)
        let observation = notifier.observe { heard.withLock { $0 += 1 } }
        defer { observation.cancel() }
        notifier.post()
        try await waitUntil(timeout: 300) { heard.withLock { $0 } == 1 }
    }
    @Test("an owner's instance is a fresh random UUID (version 4) each time: two runs of one pid never share one")
    func ownerInstancesAreRandomUUIDs() {
        var seen: Set<String> = []
        for _ in 0..<1_000 {
            let owner = RefreshLease.Owner.inThisProcess()
            #expect(owner.processIdentifier == getpid())
            let uuid = UUID(uuidString: owner.instance)
            #expect(uuid != nil, "not a UUID: \(owner.instance)")
            if let uuid {
                #expect(uuid.uuid.6 >> 4 == 4, "not version 4")
                #expect(uuid.uuid.8 >> 6 == 0b10, "not the RFC 4122 variant")
            }
            seen.insert(owner.instance)
        }
        #expect(seen.count == 1_000)
    }
}

/// Session number `n`, for store tests.
func sampleSession(_ n: Int) -> ManagedSession {
    ManagedSession(
        accessToken: "access-\(n)",
        refreshToken: "refresh-\(n)",
        expiresAt: 1_800_003_600,
        issuedAt: 1_800_000_000,
        user: ManagedUser(identifier: "sample")
    )
}
