import AuthSession
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A ``SessionStore`` in one file, as careful with it as ssh is with its keys.
///
/// ```swift
/// let store = try FileSessionStore(applicationName: "com.example.cli")
/// if let session = try store.load() {
///     print("restored \(session.user.identifier)")
/// }
/// ```
///
/// - **Where**: `$XDG_DATA_HOME/<application>/session.json` (or
///   `~/.local/share/<application>/session.json`) on Linux, Application Support on Apple
///   platforms; ``init(directory:fileName:synchronizesWrites:changeNotificationName:exclusiveAccessWaitLimit:)`` chooses another folder.
/// - **Who can read it**: the file is created with mode 0600 in a folder of mode 0700 (created if
///   missing). A file or folder that other users can read or write, that belongs to another
///   user, or that is a symbolic link is refused with a ``SessionStoreError``, never used.
/// - **Crashes**: a save writes a new file beside the old one, `fsync`s it, renames it over the
///   old one and `fsync`s the folder: a process killed at any moment leaves the old session or
///   the new one, never a mix and never nothing. On Apple platforms the syncs are `F_FULLFSYNC`,
///   since `fsync` there stops at the drive's cache (`fsync` where a file system refuses it).
/// - **Backups (Apple platforms)**: each file the store writes (the session, the lease, the lock
///   file) is excluded from backups (`URLResourceValues.isExcludedFromBackup`): iCloud and Finder
///   backups of an iPhone, Time Machine on a Mac. A backup restored onto another device would
///   otherwise present the same rotating refresh token from two devices, and a server that detects
///   reuse ends the session on both. Apple says the attribute can be reset by "some common file
///   operations" without naming them; a save replaces the file by a rename, so each new file gets
///   it before it takes the session file's name (the attribute stays with the file, not the
///   name). A restored device signs in again.
/// - **Data protection (iOS)**: each file the store writes gets the class "complete until first
///   user authentication" (`FileProtectionType.completeUntilFirstUserAuthentication`, set with
///   `FileManager.setAttributes` on the new file before its tokens are written), whatever the
///   app's default: readable by a background refresh or an extension on a locked device once the
///   user unlocked it after the restart. Before the first unlock `open` answers `EPERM`, which is
///   ``SessionStoreError/unavailable(reason:)``, never "no session": the manager stays loading.
///   A file an earlier version wrote keeps its class until the next save replaces it. On macOS
///   and Linux `EPERM` is a lasting denial, an `.io` error. A class or an exclusion that cannot be
///   set fails the save, the stored session unchanged (a volume that keeps no backup attribute,
///   `ENOTSUP`, is no failure).
/// - **App extensions**: an app and its extensions share one store in their app group's
///   container (`FileManager.containerURL(forSecurityApplicationGroupIdentifier:)`), which every
///   target lists under App Groups; each process's own folders are not visible to the others.
/// - **Other processes**: ``withExclusiveAccess(_:)`` takes an advisory `flock` on a sibling
///   lock file (`session.json.lock`), so processes sharing the file take turns; it is held for
///   microseconds, never across the network. A refresh in flight is recorded in a sibling lease
///   file (`session.json.lease`, see ``RefreshLease``), and every write is a change notice the
///   other processes hear (``changeNotifier``: inotify on Linux, the Darwin notification center
///   on Apple platforms).
/// - **Corrupt data**: bytes that are not a session are moved aside to
///   `session.json.corrupt-<date>-<random>` (kept for inspection until the next ``remove()``,
///   since such bytes may hold tokens) by a load that has, or can take at once, the exclusive
///   access (so a move never races another process's save), and reported as
///   ``SessionStoreError/corrupt(reason:setAsideAt:)``; a file written by a newer version of the
///   package is left in place (until a sign-in here replaces it).
/// - **Killed saves**: a save killed before its rename leaves its new file beside the session
///   file, holding what it was writing. Each save locks its new file (`flock`) before the first
///   byte until after the rename, so the next save or removal deletes at once a new file that
///   holds bytes and that no writer holds, whatever process it names: a sign-out leaves no token
///   in the folder.
/// - **Limits**: a stored file larger than 1 MiB is corrupt (a session is a few kilobytes).
///
/// All operations are thread-safe.
public final class FileSessionStore: SessionStore {

    /// How many times a load looks for a missing session file while another holds the exclusive
    /// access (50 µs apart, about a millisecond in all) before it reads "no session": a set-aside
    /// and its write-back take microseconds, and a holder stopped between them leaves the
    /// set-aside record, read at the first look. Kept short: a launch reads the store on the
    /// thread that creates the handle, often the main thread.
    static let missingFileLooks = 20

    /// The largest file read as a session.
    public static let maximumFileSize = 1 << 20

    /// The folder that holds the file.
    public let directory: URL

    /// The session file.
    public let fileURL: URL

    /// Whether each write is made durable with `fsync` (of the file, then of the folder) before
    /// it is reported done. `true` unless a caller trades durability for speed (a cache, a
    /// benchmark).
    public let synchronizesWrites: Bool

    /// How long ``withExclusiveAccess(_:)`` waits for another process that holds the store, in
    /// seconds, while no process has a turn (a holder stopped inside), before it gives up with
    /// ``SessionStoreError/unavailable(reason:)``. A queue of processes that take their turns is
    /// waited for however long it is.
    public let exclusiveAccessWaitLimit: TimeInterval

    let path: String
    let directoryPath: String
    /// The session file's name, as the last component of ``fileURL``.
    private let fileComponent: String
    /// The lock, the lease and the notices.
    private let coordination: FileCoordination
    private let temporaryCounter = ConcurrencySafeContainer<UInt64>(0)

    /// Creates a store for the file `fileName` in `directory`. Nothing is created or read yet.
    ///
    /// - Parameters:
    ///   - directory: The folder; created with mode 0700 on the first save if missing.
    ///   - fileName: The file's name.
    ///   - synchronizesWrites: Whether writes are made durable with `fsync`; keep the default.
    ///   - changeNotificationName: On Apple platforms, the Darwin notification name the processes
    ///     sharing the file post and hear; `nil` derives one from the file's path, which starts
    ///     with the app group's identifier for a folder in a macOS app group container, as a
    ///     sandboxed app's must. Elsewhere in a sandboxed macOS app, start it with the app group's
    ///     identifier. Ignored on other platforms.
    ///   - exclusiveAccessWaitLimit: How long ``withExclusiveAccess(_:)`` waits for another
    ///     process that holds the store (for microseconds, unless it was stopped) while no
    ///     process has a turn, before it gives up with ``SessionStoreError/unavailable(reason:)``;
    ///     10 seconds by default.
    public convenience init(
        directory: URL,
        fileName: String = "session.json",
        synchronizesWrites: Bool = true,
        changeNotificationName: String? = nil,
        exclusiveAccessWaitLimit: TimeInterval = 10
    ) {
        self.init(
            directory: directory,
            fileName: fileName,
            synchronizesWrites: synchronizesWrites,
            changeNotificationName: changeNotificationName,
            safeguarding: .platform,
            exclusiveAccessWaitLimit: exclusiveAccessWaitLimit
        )
    }

    /// Creates a store whose files get `safeguarding` (a recorder, in the tests), and whose
    /// notifier `makeNotifier` makes from the folder and the watched names (a test's), if given.
    init(
        directory: URL,
        fileName: String = "session.json",
        synchronizesWrites: Bool = true,
        changeNotificationName: String? = nil,
        safeguarding: FileSafeguarding,
        exclusiveAccessWaitLimit: TimeInterval = 10,
        makeNotifier: (@Sendable (_ directory: String, _ names: Set<String>) -> any SessionChangeNotifier)? = nil
    ) {
        self.synchronizesWrites = synchronizesWrites
        // Not a number, or not positive: the default.
        self.exclusiveAccessWaitLimit =
            exclusiveAccessWaitLimit > 0 && exclusiveAccessWaitLimit.isFinite ? exclusiveAccessWaitLimit : 10
        if let folder = Self.plainPath(of: directory), Self.isPlainComponent(fileName) {
            // What `standardizedFileURL` and `appendingPathComponent` give for a path that is
            // already standard (absolute, no `.`, `..` or empty component, nothing they rewrite),
            // built from the path instead: a launch constructs a store, and those cost microseconds.
            directoryPath = folder
            path = folder == "/" ? "/" + fileName : folder + "/" + fileName
            self.directory = URL(fileURLWithPath: folder, isDirectory: directory.hasDirectoryPath)
            fileURL = URL(fileURLWithPath: path, isDirectory: false)
            fileComponent = fileName
        } else {
            self.directory = directory.standardizedFileURL
            fileURL = self.directory.appendingPathComponent(fileName, isDirectory: false)
            path = fileURL.path
            directoryPath = self.directory.path
            fileComponent = fileURL.lastPathComponent
        }
        coordination = FileCoordination(
            directoryPath: directoryPath,
            baseName: fileComponent,
            sessionFileName: fileComponent,
            notificationName: changeNotificationName,
            safeguarding: safeguarding,
            makeNotifier: makeNotifier
        )
    }

    /// Creates a store in the platform's default data folder for `applicationName`.
    ///
    /// - Parameter applicationName: A folder name for the application, such as a reverse-DNS
    ///   identifier.
    /// - Throws: ``SessionStoreError/unavailable(reason:)`` if no data folder can be found.
    public convenience init(applicationName: String) throws(SessionStoreError) {
        self.init(directory: try Self.defaultDirectory(applicationName: applicationName))
    }

    /// The folder a store for `applicationName` uses by default: under `$XDG_DATA_HOME` (or
    /// `~/.local/share`) on Linux, under Application Support on Apple platforms.
    ///
    /// - Parameter applicationName: The application's folder name.
    /// - Returns: The folder.
    /// - Throws: ``SessionStoreError/unavailable(reason:)`` if there is no home folder to use.
    public static func defaultDirectory(applicationName: String) throws(SessionStoreError) -> URL {
        #if canImport(Darwin)
        guard let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        else { throw .unavailable(reason: "no Application Support folder") }
        return support.appendingPathComponent(applicationName, isDirectory: true)
        #else
        let environment = ProcessInfo.processInfo.environment
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return URL(fileURLWithPath: dataHome, isDirectory: true).appendingPathComponent(applicationName)
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw .unavailable(reason: "neither XDG_DATA_HOME nor HOME is set")
        }
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/share/\(applicationName)", isDirectory: true)
        #endif
    }

    // MARK: - SessionStore

    /// Reads the session file.
    ///
    /// - Returns: The session, or `nil` if the folder or the file does not exist.
    /// - Throws: ``SessionStoreError``: `.corrupt` (the bytes were moved aside, or, while another
    ///   thread or process holds the exclusive access, left in place for the next load inside
    ///   it: `setAsideAt` is then `nil`), or, with the file left as it is, `.unsupportedFormatVersion`, `.symbolicLink`, `.insecurePermissions`,
    ///   `.foreignOwner`, `.notARegularFile` or `.io`.
    public func load() throws(SessionStoreError) -> ManagedSession? {
        guard let folder = try FileSystem.status(of: directoryPath) else { return nil }
        try FileSystem.checkPrivate(folder, at: directoryPath, isDirectory: true)
        var opened: Int32?
        for look in 0..<Self.missingFileLooks {
            do {
                opened = try FileSystem.openFile(path, O_RDONLY | O_NONBLOCK)
                break
            } catch .io(_, _, let code) where code == ENOENT {
                // No file: nobody is signed in, unless it was set aside as unreadable since the
                // last save (a process sharing the store read it first), which is no sign-out.
                if let setAside = setAsideRecord() {
                    throw .corrupt(reason: "the session file was unreadable and set aside", setAsideAt: setAside)
                }
                // No record either. A write-back may have landed between the two looks (its save
                // removes the record after its file is in place), so this is certain only inside
                // the exclusive access, where no set-aside or save is half done. Taken if it is
                // free (never waited for: a caller may hold locks of its own); while another
                // holds it, looked at again shortly (``missingFileLooks``).
                let settled = try? coordination.withExclusiveAccessIfHeldOrAvailable { () -> Bool in
                    (try? FileSystem.status(of: path)) == nil && setAsideRecord() == nil
                }
                if settled == true || look == Self.missingFileLooks - 1 { return nil }
                if settled == nil { usleep(50) }
            }
        }
        guard let descriptor = opened else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io(operation: "fstat", path: path, code: errno) }
        try FileSystem.checkPrivate(info, at: path, isDirectory: false)
        let data = try FileSystem.readAll(
            descriptor,
            expectedSize: Int(info.st_size),
            limit: Self.maximumFileSize,
            path: path
        )
        // Moved aside only inside the exclusive access (held here, or free now): outside it, the
        // look and the rename could move a session another process just wrote back, and a
        // reader between the two would find no file. Left in place, the bytes stay corrupt to
        // every reader, and whoever next reads them inside the access moves them.
        return try SessionFormat.storedSession(in: data) {
            (try? coordination.withExclusiveAccessIfHeldOrAvailable { setAside(file: info) }) ?? nil
        }
    }

    /// Writes `session` to a new file beside the session file, makes it durable, and renames it
    /// over the session file.
    ///
    /// - Parameter session: The session to keep.
    /// - Throws: ``SessionStoreError``; the stored file is unchanged. A session file that is a
    ///   symbolic link, belongs to another user or has group or world permissions is refused,
    ///   not replaced.
    public func save(_ session: ManagedSession) throws(SessionStoreError) {
        try FileSystem.ensurePrivateDirectory(directoryPath)
        if let existing = try FileSystem.status(of: path) {
            try FileSystem.checkPrivate(existing, at: path, isDirectory: false)
        }
        try replaceAtomically(path, with: SessionFormat.encode(session))
        try? FileSystem.unlinkIfPresent(setAsideRecordPath)
        removeLeftovers(includingSetAside: false)
        if synchronizesWrites {
            try FileSystem.synchronizeDirectory(directoryPath)
        }
        coordination.notifier.post()
    }

    /// Deletes the session file.
    ///
    /// - Throws: ``SessionStoreError``; a session file that is a symbolic link or not ours is
    ///   refused, not deleted.
    public func remove() throws(SessionStoreError) {
        guard let folder = try FileSystem.status(of: directoryPath) else { return }
        try FileSystem.checkPrivate(folder, at: directoryPath, isDirectory: true)
        try? FileSystem.unlinkIfPresent(setAsideRecordPath)
        // Before the session file: a sign-out leaves no token in the folder, whatever a killed
        // save or an unreadable file left there.
        removeLeftovers(includingSetAside: true)
        guard let existing = try FileSystem.status(of: path) else { return }
        try FileSystem.checkPrivate(existing, at: path, isDirectory: false)
        try FileSystem.unlinkIfPresent(path)
        if synchronizesWrites {
            try FileSystem.synchronizeDirectory(directoryPath)
        }
        coordination.notifier.post()
    }

    /// Runs `body` holding this store's lock in this process and an exclusive `flock` on the
    /// sibling lock file, so no other thread or process sharing the file runs its own at the same
    /// time. Blocks the calling thread while another holds it, which is never for long: nothing
    /// is held across the network. A process stopped while it holds it (`SIGSTOP`, a debugger,
    /// the system suspending it) is waited for at most ``exclusiveAccessWaitLimit`` seconds with no
    /// turn taken (a turn count in the lock file says when processes take theirs): the
    /// call then throws ``SessionStoreError/unavailable(reason:)``, whose reason says so. If the
    /// lock file (or its folder) was replaced while this process held the old one open, the new
    /// one is opened and locked instead.
    ///
    /// - Parameter body: The read-modify-write; it may call ``load()``, ``save(_:)``,
    ///   ``remove()``, ``loadLease()`` and ``saveLease(_:)``, not this method.
    /// - Returns: What `body` returns.
    /// - Throws: ``SessionStoreError`` if the lock file cannot be opened or locked (it is refused
    ///   like the session file if it is a link or not private), or what `body` throws.
    public func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try coordination.withExclusiveAccess(waitingAtMost: exclusiveAccessWaitLimit, body)
    }

    /// ``withExclusiveAccess(_:)`` if no other thread or process holds it now; `nil` without
    /// waiting if one does.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns, or `nil`.
    /// - Throws: ``SessionStoreError`` if the lock file cannot be opened or locked, or what `body`
    ///   throws.
    public func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        try coordination.withExclusiveAccessIfAvailable(body)
    }

    /// The refresh lease recorded in the sibling file `session.json.lease`; `nil` if none is, or
    /// if the file is unreadable (a lease is advisory).
    ///
    /// - Returns: The lease.
    /// - Throws: ``SessionStoreError`` if the lease file is a link, not private, or unreadable.
    public func loadLease() throws(SessionStoreError) -> RefreshLease? {
        try coordination.loadLease()
    }

    /// Records `lease` in the sibling lease file, or (`nil`) removes it; a change notice.
    ///
    /// - Parameter lease: The lease, or `nil`.
    /// - Throws: ``SessionStoreError``.
    public func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) {
        try coordination.saveLease(lease)
    }

    /// The notices of this store's changes, by any process: inotify on the folder on Linux, the
    /// Darwin notification center on Apple platforms, polling elsewhere.
    public var changeNotifier: (any SessionChangeNotifier)? { coordination.notifier }

    // MARK: - Helpers

    /// The path of `directory` if standardizing it would not change it: a file URL without a base
    /// whose path is absolute, without an empty, `.` or `..` component or a trailing slash, and
    /// not under a prefix that standardizing strips (`/private/`, `/var/automount/`); else `nil`.
    private static func plainPath(of directory: URL) -> String? {
        guard directory.baseURL == nil, directory.isFileURL else { return nil }
        let path = directory.path
        guard path.utf8.first == UInt8(ascii: "/") else { return nil }
        if path.utf8.count == 1 { return path }
        if path.hasPrefix("/private/") || path.hasPrefix("/var/automount/") { return nil }
        // The components after the leading slash, and the one the path ends with.
        var length = 0
        var dots = 0
        for byte in path.utf8.dropFirst() {
            switch byte {
            case UInt8(ascii: "/"):
                guard isPlainComponent(length: length, dots: dots) else { return nil }
                length = 0
                dots = 0
            case 0:
                return nil
            default:
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return isPlainComponent(length: length, dots: dots) ? path : nil
    }

    /// Whether a component of `length` bytes, `dots` of them dots, is neither empty, `.` nor `..`.
    private static func isPlainComponent(length: Int, dots: Int) -> Bool {
        length > 0 && !(dots == length && length <= 2)
    }

    /// Whether `name` is one ordinary path component: not empty, `.` or `..`, without a slash or
    /// a NUL.
    private static func isPlainComponent(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.contains(UInt8(ascii: "/")) && !bytes.contains(0)
            && isPlainComponent(length: bytes.count, dots: bytes.count(where: { $0 == UInt8(ascii: ".") }))
    }

    /// Writes the set-aside record (a new private file renamed over the old), best effort.
    private func writeSetAsideRecord(_ destination: String) {
        try? replaceAtomically(setAsideRecordPath, with: Data(destination.utf8))
    }

    /// Writes `data` to a new private file beside the session file (`.session.json.tmp-…`) and
    /// renames it to `destination`. The new file is locked (`flock`) from before its first byte
    /// until after the rename: a new file that is not locked and holds bytes was left by a writer
    /// that died, which ``removeLeftovers(includingSetAside:)`` deletes at once, whatever process
    /// identifier it names (one in another PID namespace, or reused, included).
    func replaceAtomically(_ destination: String, with data: Data) throws(SessionStoreError) {
        let temporary = temporaryPath()
        let descriptor = try FileSystem.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        defer { close(descriptor) }
        do {
            // A new file: nobody else can hold its lock.
            _ = try FileSystem.tryLock(descriptor, path: temporary)
            // Before a token is written, and on each new file: a rename replaces the session file,
            // and what was set on the old one with it.
            try coordination.safeguarding.apply(to: temporary)
            try FileSystem.writeAll(data, to: descriptor, path: temporary)
            if synchronizesWrites {
                try FileSystem.synchronize(descriptor, path: temporary)
            }
            try FileSystem.renameItem(temporary, to: destination)
        } catch {
            try? FileSystem.unlinkIfPresent(temporary)
            throw error
        }
    }

    /// A name for a new file beside the session file, unique to this process and call.
    private func temporaryPath() -> String {
        let count = temporaryCounter.withLock { counter in
            counter &+= 1
            return counter
        }
        return
            "\(directoryPath)/.\(fileComponent).tmp-\(getpid())-\(count)-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// How old a lease's new file (which holds no token) of a live process must be to count as
    /// abandoned: no save takes this long, so one that did was stopped or its process identifier
    /// reused.
    static let abandonedFileAge: TimeInterval = 600

    /// Deletes the new files that saves killed before their rename left beside the session file:
    /// `.session.json.tmp-*` (what was being written, tokens included) that no writer holds
    /// (``replaceAtomically(_:with:)``), and `session.json.lease.tmp-*` of a process that no
    /// longer runs or older than ``abandonedFileAge``. With `includingSetAside` (a removal: a sign-out), the unreadable files
    /// set aside for inspection go too, since they may hold tokens. Best effort: a file that
    /// cannot be listed or deleted stays, and the next save or removal tries again.
    private func removeLeftovers(includingSetAside: Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directoryPath) else { return }
        let sessionPrefix = ".\(fileComponent).tmp-"
        let leasePrefix = "\(fileComponent).lease.tmp-"
        let setAsidePrefix = "\(fileComponent).corrupt-"
        let now = Date().timeIntervalSince1970
        for name in names {
            let suffix: Substring
            if name.hasPrefix(sessionPrefix) {
                suffix = name.dropFirst(sessionPrefix.count)
            } else if name.hasPrefix(leasePrefix) {
                suffix = name.dropFirst(leasePrefix.count)
            } else {
                if includingSetAside && name.hasPrefix(setAsidePrefix) {
                    try? FileSystem.unlinkIfPresent("\(directoryPath)/\(name)")
                }
                continue
            }
            let filePath = "\(directoryPath)/\(name)"
            guard let info = try? FileSystem.status(of: filePath), UInt32(info.st_uid) == FileSystem.currentUser else {
                continue
            }
            // Foundation's date, not `stat`'s field: its name differs between Darwin and Glibc.
            let modified = (try? FileManager.default.attributesOfItem(atPath: filePath))?[.modificationDate] as? Date
            let age = now - (modified?.timeIntervalSince1970 ?? now)
            if name.hasPrefix(sessionPrefix) {
                // Its writer holds its lock from before the first byte until after the rename.
                removeIfAbandoned(filePath, holdsBytes: info.st_size > 0, age: age)
                continue
            }
            let owner = suffix.split(separator: "-", maxSplits: 1).first.flatMap { pid_t($0) }
            if age > Self.abandonedFileAge || owner.map(Self.processIsGone) ?? false {
                try? FileSystem.unlinkIfPresent(filePath)
            }
        }
    }

    /// Deletes the new file at `filePath` if no writer holds its lock and it holds bytes (its
    /// writer died after it wrote), or is empty and over a second old (its writer died, or is
    /// stopped, between creating and locking it).
    private func removeIfAbandoned(_ filePath: String, holdsBytes: Bool, age: TimeInterval) {
        guard holdsBytes || age > 1,
            let descriptor = try? FileSystem.openFile(filePath, O_RDONLY | O_NONBLOCK)
        else { return }
        defer { close(descriptor) }
        guard (try? FileSystem.tryLock(descriptor, path: filePath)) == true else { return }
        try? FileSystem.unlinkIfPresent(filePath)
    }

    /// Whether no process runs with this identifier (`kill` with no signal answers `ESRCH`); this
    /// process and one that cannot be asked (`EPERM`) count as running.
    private static func processIsGone(_ pid: pid_t) -> Bool {
        guard pid > 0, pid != getpid() else { return false }
        return kill(pid, 0) == -1 && errno == ESRCH
    }

    /// The sibling file that says the session file was set aside as unreadable, and where: until
    /// the next save or removal, a load that finds no session file reports the set-aside bytes
    /// (`.corrupt`), never "no session", so that processes sharing the store do not read the
    /// set-aside as a sign-out.
    private var setAsideRecordPath: String { "\(path).set-aside" }

    /// Where the record says the unreadable file went, if there is a record.
    private func setAsideRecord() -> String? {
        guard let descriptor = try? FileSystem.openFile(setAsideRecordPath, O_RDONLY | O_NONBLOCK) else { return nil }
        defer { close(descriptor) }
        let data = try? FileSystem.readAll(descriptor, expectedSize: 0, limit: 4096, path: setAsideRecordPath)
        return data.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Moves the corrupt file aside, if the file at the session path is still the one that was
    /// read (another process may have saved a good one meanwhile); returns where it went. The
    /// record of it is written first: a process that finds the file gone reads the record.
    private func setAside(file: stat) -> String? {
        guard let current = try? FileSystem.status(of: path), current.st_dev == file.st_dev,
            current.st_ino == file.st_ino
        else { return nil }
        let stamp = Int(Date().timeIntervalSince1970)
        let destination = "\(path).corrupt-\(stamp)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        writeSetAsideRecord(destination)
        guard (try? FileSystem.renameItem(path, to: destination)) != nil else { return nil }
        // The look and the rename are two steps: another process may have written a good session
        // between them (its write-back), which the rename then moved. Put such a file back (a link
        // fails if yet another file is there now: then this one is older, and goes), so the
        // store never loses a session it held; the record is this process's to take back.
        if let moved = try? FileSystem.status(of: destination),
            moved.st_dev != file.st_dev || moved.st_ino != file.st_ino
        {
            guard link(destination, path) == 0 || errno == EEXIST else {
                // Not put back: it stays set aside, and the record says so (readers write back).
                return destination
            }
            try? FileSystem.unlinkIfPresent(destination)
            try? FileSystem.unlinkIfPresent(setAsideRecordPath)
            return nil
        }
        try? FileSystem.synchronizeDirectory(directoryPath)
        return destination
    }
}
