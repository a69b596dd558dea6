import AuthSession
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What processes sharing a store coordinate through, in one private folder: a lock file for the
/// short exclusive access, a lease file for the refresh in flight, and change notices. Used by
/// ``FileSessionStore`` (in the session's folder) and by ``KeychainSessionStore`` (in its
/// coordination folder).
final class FileCoordination: Sendable {

    let directoryPath: String
    let lockPath: String
    /// ``lockPath`` as a C string, made once: the identity check of every exclusive access passes
    /// it to `lstat`, and a `String` argument would be converted (and allocated) at each call.
    private let lockPathCString: ContiguousArray<CChar>
    let leasePath: String
    /// A file written after each change of a session that is not a file here (a Keychain item),
    /// so that a watch of the folder sees it.
    let markerPath: String?
    /// The files whose changes are notices: the session's (or the marker), and the lease's.
    let watchedNames: Set<String>
    let notifier: any SessionChangeNotifier
    /// What is done to the files written here (the lease, the lock file), and to the session file
    /// of a file store.
    let safeguarding: FileSafeguarding

    /// What the in-process lock guards, held for the whole of each exclusive access.
    private let exclusive = ConcurrencySafeContainer(Exclusive())

    private struct Exclusive: Sendable {
        /// The lock file, opened on first exclusive access and kept open.
        var lockFile: LockFile?
        /// When this process's last wait for the lock file gave up (a holder stopped inside), and
        /// the turn count it saw: a thread that was queued behind that wait on the in-process lock
        /// gives up at once while the count stands still, instead of waiting a whole limit more
        /// (threads queued one behind another would otherwise wait a limit each).
        var lastGiveUp: (turns: UInt64?, uptime: TimeInterval)?
    }

    /// The open lock file and the identity it had when opened: an open file's device and inode
    /// never change, so checking that it is still the one at the path takes one `lstat` of the
    /// path, not an `fstat` as well.
    private struct LockFile: Sendable {
        let descriptor: Int32
        let device: UInt64
        let inode: UInt64
    }

    /// Creates the coordination for the files named `baseName…` in `directoryPath`.
    ///
    /// - Parameters:
    ///   - directoryPath: The private folder.
    ///   - baseName: The lock file is `<baseName>.lock`, the lease `<baseName>.lease`.
    ///   - sessionFileName: The session file's name if the session is a file there.
    ///   - notificationName: The Darwin notification name, on Apple platforms.
    ///   - safeguarding: What is done to each file written here; the platform's by default.
    ///   - makeNotifier: The notifier of the folder and the watched names, instead of the
    ///     platform's (a test's).
    init(
        directoryPath: String,
        baseName: String,
        sessionFileName: String?,
        notificationName: String?,
        safeguarding: FileSafeguarding = .platform,
        makeNotifier: (@Sendable (_ directory: String, _ names: Set<String>) -> any SessionChangeNotifier)? = nil
    ) {
        self.directoryPath = directoryPath
        self.safeguarding = safeguarding
        lockPath = "\(directoryPath)/\(baseName).lock"
        lockPathCString = lockPath.utf8CString
        leasePath = "\(directoryPath)/\(baseName).lease"
        let leaseName = "\(baseName).lease"
        let markerName = sessionFileName == nil ? "\(baseName).changed" : nil
        markerPath = markerName.map { "\(directoryPath)/\($0)" }
        watchedNames = Set([leaseName] + [sessionFileName ?? markerName].compactMap { $0 })
        if let makeNotifier {
            notifier = makeNotifier(directoryPath, watchedNames)
            return
        }
        #if canImport(notify)
        let name = notificationName ?? Self.defaultNotificationName(directoryPath: directoryPath, baseName: baseName)
        notifier = DarwinNotifyChangeNotifier(name: name)
        #elseif os(Linux)
        notifier = InotifyChangeNotifier(directory: directoryPath, names: watchedNames)
        #else
        let folder = directoryPath
        let names = watchedNames
        notifier = PollingChangeNotifier(interval: 0.5) { FileCoordination.signature(of: folder, names: names) }
        #endif
    }

    /// The Darwin notification name of the store whose files are `<baseName>…` in
    /// `directoryPath`, when the caller gives none: one name per store, derived from its path, so
    /// that every process that opens the same path hears the others.
    ///
    /// A sandboxed macOS app may post and hear only the Darwin notifications whose name starts with
    /// one of its app groups (the App Sandbox ties interprocess names to the group; Apple's
    /// documentation spells the rule out for Mach and POSIX names and is silent on `notify(3)`, so
    /// this is the careful reading). In a macOS app group container (`…/Library/Group
    /// Containers/<group>/…`, what `containerURL(forSecurityApplicationGroupIdentifier:)` gives
    /// there) the name therefore starts with the group: `<group>.authsessionkit.changed.<hash>`.
    /// Elsewhere it is `authsessionkit.changed.<hash>`; an iOS group container's path names no
    /// group (a UUID stands for it), and iOS sets no such rule.
    static func defaultNotificationName(directoryPath: String, baseName: String) -> String {
        let name = "authsessionkit.changed.\(RefreshLease.fingerprint(of: "\(directoryPath)/\(baseName)"))"
        guard let group = appGroupIdentifier(inContainerPath: directoryPath) else { return name }
        return "\(group).\(name)"
    }

    /// The app group whose macOS container holds `path`: the component after `Library/Group
    /// Containers`; `nil` for any other path.
    static func appGroupIdentifier(inContainerPath path: String) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        guard
            let index = components.indices.dropFirst().first(where: {
                components[$0] == "Group Containers" && components[$0 - 1] == "Library"
            }), index + 1 < components.count
        else { return nil }
        return String(components[index + 1])
    }

    deinit {
        if let lockFile = exclusive.withLock({ $0.lockFile }) {
            close(lockFile.descriptor)
        }
    }

    /// Tells the processes sharing the folder that the session changed: writes the marker file
    /// (a session that is not a file here), then posts. Best effort: a notice is a hint.
    func announceChange() {
        if let markerPath,
            let descriptor = try? FileSystem.openFile(markerPath, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
        {
            var stamp = UInt64(Date().timeIntervalSince1970 * 1_000_000)
            _ = write(descriptor, &stamp, MemoryLayout<UInt64>.size)
            close(descriptor)
        }
        notifier.post()
    }

    // MARK: - Exclusive access

    /// Runs `body` holding the in-process lock and an exclusive `flock` on the lock file. After
    /// locking, checks that the open file is still the one at the path (same device and inode):
    /// if the folder or the file was replaced, a newcomer would lock the new one, so the old one
    /// is closed and the new one opened and locked instead.
    ///
    /// Another process holds the lock for microseconds; one that holds it longer was stopped
    /// (`SIGSTOP`, a debugger, the system suspending it) or hangs. The wait for it is bounded:
    /// after `waitLimit` seconds it ends with ``SessionStoreError/unavailable(reason:)``, which says
    /// so, rather than blocking the caller's thread until that process runs again.
    func withExclusiveAccess<Result>(
        waitingAtMost waitLimit: TimeInterval = FileCoordination.defaultWaitLimit,
        _ body: () throws -> Result
    ) throws -> Result {
        try exclusive.withLock { state in
            let lockFile = try lockFileAtPath(&state, waitLimit: waitLimit)
            defer { try? FileSystem.lock(lockFile, LOCK_UN, path: lockPath) }
            Self.recordTurnIfAsked(lockFile)
            return try holding(body)
        }
    }

    /// The thread inside the exclusive access, while one is (the access is not recursive, and
    /// `body` is synchronous, so it stays on that thread). A thread, not a task-local value: a
    /// task started inside `body` would inherit that, and outlive the access.
    private let holder = ConcurrencySafeContainer<ThreadID?>(nil)

    /// Runs `body` marked as inside this coordination's exclusive access.
    private func holding<Result>(_ body: () throws -> Result) rethrows -> Result {
        holder.withLock { $0 = ThreadID.current }
        defer { holder.withLock { $0 = nil } }
        return try body()
    }

    /// Runs `body` inside the exclusive access: at once if the calling thread holds it already,
    /// else if it can be had without waiting; `nil` (body not run) if another thread or process
    /// holds it. Never blocks, so a caller holding locks of its own cannot deadlock here.
    func withExclusiveAccessIfHeldOrAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        let thread = ThreadID.current
        if holder.withLock({ $0 == thread }) { return try body() }
        return try withExclusiveAccessIfAvailable(body)
    }

    /// The lock file's first 16 bytes: the turns counted (8 bytes), then whether a waiter asked
    /// for turns to be counted since the last was (8 bytes, nonzero when one did). No `fsync`:
    /// only waiters read them.
    private struct TurnRecord {
        var turns: UInt64 = 0
        var asked: UInt64 = 0
    }

    /// Counts one more turn in the lock file if a waiter asked (``askForTurns(_:)``): a waiter that
    /// sees the count move knows the holders are making progress, and keeps waiting however long
    /// the queue is; only a count that stands still for the wait limit is a holder stopped inside.
    /// Uncontended, a turn costs one `pread`: nobody waits, nobody needs the count. (A waiter of
    /// an earlier version, which counted every turn and never asks, sees no count move; it gives
    /// up only after the wait limit of unbroken contention, which holders of microseconds do not
    /// make.)
    private static func recordTurnIfAsked(_ lockFile: Int32) {
        var record = TurnRecord()
        let size = MemoryLayout<TurnRecord>.size
        // A shorter file (empty, or the 8 bytes of an earlier version) reads as nobody asking.
        guard pread(lockFile, &record, size, 0) == size, record.asked != 0 else { return }
        record.turns &+= 1
        record.asked = 0
        _ = pwrite(lockFile, &record, size, 0)
    }

    /// Asks the holders to count their turns, for a waiter that is about to watch the count.
    private static func askForTurns(_ lockFile: Int32) {
        var asked: UInt64 = 1
        _ = pwrite(lockFile, &asked, MemoryLayout<UInt64>.size, 8)
    }

    /// The turns counted in the lock file (0 for an empty or unreadable one).
    private static func turns(_ lockFile: Int32) -> UInt64 {
        var count: UInt64 = 0
        guard pread(lockFile, &count, MemoryLayout<UInt64>.size, 0) == MemoryLayout<UInt64>.size else { return 0 }
        return count
    }

    /// How long ``withExclusiveAccess(waitingAtMost:_:)`` waits for another process by default.
    static let defaultWaitLimit: TimeInterval = 10

    /// Why a wait for the lock ended.
    static func heldTooLong(_ waitLimit: TimeInterval) -> SessionStoreError {
        let seconds = waitLimit == waitLimit.rounded() ? "\(Int(waitLimit))" : String(format: "%.1f", waitLimit)
        return .unavailable(
            reason:
                "another process has held the store's exclusive access for over \(seconds) s (it may be stopped or suspended); try again later"
        )
    }

    /// Takes the lock on the file now at the path, waiting for other processes as long as they
    /// make progress, and at most `waitLimit` seconds without any (a holder stopped inside): tries
    /// without blocking, then sleeps a little longer each time (from 50 µs up to 2 ms), so a
    /// lock held for microseconds is had at once and a stopped holder costs a few hundred
    /// wake-ups a second. Progress is the turn count in the lock file (``recordTurnIfAsked(_:)``).
    private func lockFileAtPath(_ state: inout Exclusive, waitLimit: TimeInterval) throws(SessionStoreError) -> Int32 {
        // The clock is read only once the lock is found held: an uncontended access never reads it.
        if let lockFile = try tryLockFileAtPath(&state.lockFile) {
            state.lastGiveUp = nil
            return lockFile
        }
        var since = ProcessInfo.processInfo.systemUptime
        var lastTurns: UInt64?
        if let giveUp = state.lastGiveUp, since - giveUp.uptime < waitLimit,
            state.lockFile.map({ Self.turns($0.descriptor) }) == giveUp.turns
        {
            // A wait ahead of this one gave up a moment ago, and no one has had a turn since.
            throw Self.heldTooLong(waitLimit)
        }
        var pause: useconds_t = 50
        while true {
            if let lockFile = try tryLockFileAtPath(&state.lockFile) {
                state.lastGiveUp = nil
                return lockFile
            }
            let now = ProcessInfo.processInfo.systemUptime
            let turns = state.lockFile.map { Self.turns($0.descriptor) }
            if turns != lastTurns {
                // Someone had a turn since the last look: the queue moves.
                lastTurns = turns
                since = now
            } else if now - since >= waitLimit {
                state.lastGiveUp = (turns, now)
                throw Self.heldTooLong(waitLimit)
            }
            if let lockFile = state.lockFile { Self.askForTurns(lockFile.descriptor) }
            usleep(pause)
            pause = min(pause * 2, 2_000)
        }
    }

    /// ``withExclusiveAccess(_:)`` if it can be had at once (`LOCK_NB`); `nil` if another thread
    /// or process holds it.
    func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        let outcome = try exclusive.withLockIfAvailable { state -> Result? in
            guard let lockFile = try tryLockFileAtPath(&state.lockFile) else { return nil }
            state.lastGiveUp = nil
            defer { try? FileSystem.lock(lockFile, LOCK_UN, path: lockPath) }
            Self.recordTurnIfAsked(lockFile)
            return try holding(body)
        }
        return outcome ?? nil
    }

    /// Locks the lock file now at the path if no one holds it, opening it into `opened` if
    /// needed and reopening it if the file there was replaced; the locked descriptor, or `nil` if
    /// another holds the lock.
    private func tryLockFileAtPath(_ opened: inout LockFile?) throws(SessionStoreError) -> Int32? {
        while true {
            if opened == nil {
                opened = try openLockFile()
            }
            let lockFile = opened!
            guard try FileSystem.tryLock(lockFile.descriptor, path: lockPath) else { return nil }
            if isAtPath(lockFile) { return lockFile.descriptor }
            try? FileSystem.lock(lockFile.descriptor, LOCK_UN, path: lockPath)
            close(lockFile.descriptor)
            opened = nil
        }
    }

    /// Whether `lockFile` is the file now at ``lockPath`` (same device and inode): the folder or
    /// the file may have been replaced, and a newcomer locks what is at the path.
    private func isAtPath(_ lockFile: LockFile) -> Bool {
        var current = stat()
        let status = lockPathCString.withUnsafeBufferPointer { path in lstat(path.baseAddress!, &current) }
        guard status == 0 else { return false }
        return UInt64(truncatingIfNeeded: current.st_dev) == lockFile.device
            && UInt64(truncatingIfNeeded: current.st_ino) == lockFile.inode
    }

    private func openLockFile() throws(SessionStoreError) -> LockFile {
        try FileSystem.ensurePrivateDirectory(directoryPath)
        let descriptor = try FileSystem.openFile(lockPath, O_RDWR | O_CREAT, mode: 0o600)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw .io(operation: "fstat", path: lockPath, code: code)
        }
        do {
            try FileSystem.checkPrivate(info, at: lockPath, isDirectory: false)
            // Once per process: a lock file an earlier version made keeps the class it was given.
            try safeguarding.apply(to: lockPath)
        } catch {
            close(descriptor)
            throw error
        }
        return LockFile(
            descriptor: descriptor,
            device: UInt64(truncatingIfNeeded: info.st_dev),
            inode: UInt64(truncatingIfNeeded: info.st_ino)
        )
    }

    // MARK: - Lease

    /// The recorded lease; `nil` when none is, or when the file is not one this user alone could
    /// have written, or is unreadable (a lease is advisory: such a file is no lease, and the next
    /// record replaces it).
    func loadLease() throws(SessionStoreError) -> RefreshLease? {
        let descriptor: Int32
        do {
            descriptor = try FileSystem.openFile(leasePath, O_RDONLY | O_NONBLOCK)
        } catch .io(_, _, let code) where code == ENOENT || code == ENOTDIR {
            return nil
        } catch .symbolicLink, .io(_, _, ELOOP) {
            // Not followed, and not a lease: the next record replaces the link itself.
            return nil
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io(operation: "fstat", path: leasePath, code: errno) }
        do {
            try FileSystem.checkPrivate(info, at: leasePath, isDirectory: false)
        } catch {
            // A file others could have written (or not a file): not a lease anyone may trust, and
            // not one that blocks a refresh; the next record replaces it.
            return nil
        }
        let data = try FileSystem.readAll(descriptor, expectedSize: Int(info.st_size), limit: 4096, path: leasePath)
        guard let document = try? JSONDecoder().decode(LeaseDocument.self, from: data),
            document.format == LeaseDocument.formatName, document.version == 1
        else { return nil }
        return document.lease
    }

    /// Records `lease` (written beside, then renamed over the lease file), or removes the record.
    /// Not synchronized to the disk: after a power loss no refresh is in flight.
    func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) {
        guard let lease else {
            try FileSystem.unlinkIfPresent(leasePath)
            notifier.post()
            return
        }
        try FileSystem.ensurePrivateDirectory(directoryPath)
        let temporary = "\(leasePath).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = try FileSystem.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        do {
            try safeguarding.apply(to: temporary)
            let data = (try? JSONEncoder().encode(LeaseDocument(lease: lease))) ?? Data()
            try FileSystem.writeAll(data, to: descriptor, path: temporary)
            close(descriptor)
            try FileSystem.renameItem(temporary, to: leasePath)
        } catch {
            close(descriptor)
            try? FileSystem.unlinkIfPresent(temporary)
            throw error
        }
        notifier.post()
    }

    /// Sizes, times and identities of `names` in `folder`: what polling compares.
    static func signature(of folder: String, names: Set<String>) -> String {
        names.sorted().map { name in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: "\(folder)/\(name)") else {
                return "-"
            }
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
            let file = (attributes[.systemFileNumber] as? NSNumber)?.int64Value ?? -1
            return "\(file):\(size):\(modified)"
        }
        .joined(separator: "|")
    }
}

/// The lease file's layout.
private struct LeaseDocument: Codable {
    static let formatName = "AuthSessionKit.lease"
    var format = formatName
    var version = 1
    var lease: RefreshLease
}
