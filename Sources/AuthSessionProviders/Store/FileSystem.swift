import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Thin wrappers over the POSIX calls the file store makes, each with explicit `O_` flags and a
/// typed error. Paths are plain strings: nothing here resolves or follows a symbolic link.
enum FileSystem {

    /// The user this process runs as.
    static var currentUser: UInt32 { UInt32(getuid()) }

    /// `lstat` of `path`, or `nil` if nothing is there. Never follows a symbolic link.
    static func status(of path: String) throws(SessionStoreError) -> stat? {
        var info = stat()
        if lstat(path, &info) == 0 { return info }
        let code = errno
        if code == ENOENT { return nil }
        throw .io(operation: "lstat", path: path, code: code)
    }

    /// Checks that what is at `path` is ours alone: not a symbolic link, of the expected kind,
    /// owned by this user, and without group or world permissions.
    static func checkPrivate(_ info: stat, at path: String, isDirectory: Bool) throws(SessionStoreError) {
        let kind = info.st_mode & S_IFMT
        if kind == S_IFLNK { throw .symbolicLink(path: path) }
        if kind != (isDirectory ? S_IFDIR : S_IFREG) { throw .notARegularFile(path: path) }
        if UInt32(info.st_uid) != currentUser { throw .foreignOwner(path: path, owner: UInt32(info.st_uid)) }
        if info.st_mode & 0o077 != 0 { throw .insecurePermissions(path: path, mode: UInt32(info.st_mode)) }
    }

    /// Creates `path` and any missing parent folder with mode 0700, then checks that the folder
    /// itself is private. Existing parents are left as they are.
    static func ensurePrivateDirectory(_ path: String) throws(SessionStoreError) {
        if let info = try status(of: path) {
            try checkPrivate(info, at: path, isDirectory: true)
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path, try status(of: parent) == nil {
            try ensurePrivateDirectory(parent)
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .io(operation: "mkdir", path: path, code: errno)
        }
        guard let info = try status(of: path) else { throw .io(operation: "mkdir", path: path, code: ENOENT) }
        try checkPrivate(info, at: path, isDirectory: true)
    }

    /// Opens `path` with `flags` plus `O_NOFOLLOW | O_CLOEXEC`, retrying on `EINTR`.
    static func openFile(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(SessionStoreError) -> Int32 {
        while true {
            let descriptor = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
            if descriptor >= 0 { return descriptor }
            let code = errno
            if code == EINTR { continue }
            throw openError(code, path: path)
        }
    }

    /// Whether `open` answering `EPERM` means a file data protection keeps closed while the device
    /// is locked (or not yet unlocked since it started): iOS and its kin. Not macOS (Mac Catalyst
    /// included), where a process runs in a logged-in session and `EPERM` is a lasting denial (the
    /// sandbox, privacy permissions), nor Linux. UIKit exists on iOS and its kin and on Mac
    /// Catalyst, never on macOS or Linux: `scripts/apple-typecheck` compiles each value, one in
    /// its iOS build and the other in its macOS build.
    static var refusesProtectedFilesWithEPERM: Bool {
        #if canImport(UIKit) && !targetEnvironment(macCatalyst)
        true
        #else
        false
        #endif
    }

    /// The error for an `open` of `path` that failed with `code`: a symbolic link is refused; on
    /// iOS `EPERM` is a file data protection keeps closed until the device is unlocked (iOS may
    /// launch an app before the first unlock), so it is
    /// ``SessionStoreError/unavailable(reason:)``, never "no session"; anything else is `.io`.
    static func openError(
        _ code: Int32,
        path: String,
        refusesProtectedFilesWithEPERM: Bool = refusesProtectedFilesWithEPERM
    ) -> SessionStoreError {
        if code == ELOOP { return .symbolicLink(path: path) }
        if code == EPERM, refusesProtectedFilesWithEPERM {
            return .unavailable(
                reason: "\(path) cannot be opened now (EPERM): data protection keeps it closed until the device "
                    + "is unlocked, or the sandbox denies it"
            )
        }
        return .io(operation: "open", path: path, code: code)
    }

    /// Reads from `descriptor` until end of file, or until more than `limit` bytes were read
    /// (then `limit + 1` bytes are returned).
    ///
    /// - Parameter expectedSize: The file's size as `fstat` gave it: the bytes are read straight
    ///   into a buffer of that size plus one, which grows if the file grew meanwhile.
    static func readAll(
        _ descriptor: Int32,
        expectedSize: Int = 0,
        limit: Int,
        path: String
    ) throws(SessionStoreError) -> Data {
        var data = Data(count: min(max(expectedSize, 4095), limit) + 1)
        var length = 0
        while length <= limit {
            if length == data.count {
                data.count = min(data.count * 2, limit + 1)
            }
            let count = data.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + length, buffer.count - length)
            }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", path: path, code: errno)
            }
            length += count
        }
        data.count = length
        return data
    }

    /// Writes all of `data` to `descriptor`.
    static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws(SessionStoreError) {
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { bytes in
                write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", path: path, code: errno)
            }
            offset += written
        }
    }

    /// Makes what was written to `descriptor` durable.
    ///
    /// On Apple platforms `fsync` hands the data to the drive, which may keep it in its cache and
    /// write it later, out of order (Apple's fsync(2) says so); `F_FULLFSYNC` asks the drive to
    /// write it to stable storage. A file system that does not support `F_FULLFSYNC` (network and
    /// some external volumes answer `ENOTSUP`, `ENOTTY` or `EINVAL`) gets `fsync`, as SQLite and
    /// LevelDB do. Elsewhere `fsync` is the durable call.
    static func synchronize(_ descriptor: Int32, path: String) throws(SessionStoreError) {
        try synchronize(descriptor, path: path, fullSynchronize: platformFullSynchronize, fileSynchronize: fsyncCode)
    }

    /// `F_FULLFSYNC` where it exists, returning `0` or the `errno`; `nil` elsewhere.
    static var platformFullSynchronize: ((Int32) -> Int32)? {
        #if canImport(Darwin)
        { descriptor in fcntl(descriptor, F_FULLFSYNC) == -1 ? errno : 0 }
        #else
        nil
        #endif
    }

    /// `fsync`, returning `0` or the `errno`.
    static func fsyncCode(_ descriptor: Int32) -> Int32 {
        fsync(descriptor) == 0 ? 0 : errno
    }

    /// The `errno` values by which a file system says it does not support `F_FULLFSYNC`.
    static let fullSynchronizeUnsupported: Set<Int32> = [ENOTSUP, EOPNOTSUPP, ENOTTY, EINVAL]

    /// The decision: `fullSynchronize` if given (retried on `EINTR`), and `fileSynchronize` if it
    /// is not given or not supported (retried on `EINTR`; its failure is the error). Any other
    /// failure of `fullSynchronize` (`EIO`, say) is the error: an `fsync` that succeeds after it
    /// would not make the write durable.
    static func synchronize(
        _ descriptor: Int32,
        path: String,
        fullSynchronize: ((Int32) -> Int32)?,
        fileSynchronize: (Int32) -> Int32
    ) throws(SessionStoreError) {
        if let fullSynchronize {
            var code = fullSynchronize(descriptor)
            while code == EINTR { code = fullSynchronize(descriptor) }
            if code == 0 { return }
            guard fullSynchronizeUnsupported.contains(code) else {
                throw .io(operation: "fcntl(F_FULLFSYNC)", path: path, code: code)
            }
        }
        var code = fileSynchronize(descriptor)
        while code == EINTR { code = fileSynchronize(descriptor) }
        if code != 0 { throw .io(operation: "fsync", path: path, code: code) }
    }

    /// Makes the entries of folder `path` durable (a rename or an unlink in it).
    static func synchronizeDirectory(_ path: String) throws(SessionStoreError) {
        let descriptor = try openFile(path, O_RDONLY | O_DIRECTORY)
        defer { close(descriptor) }
        try synchronize(descriptor, path: path)
    }

    /// `rename`, which replaces `destination` atomically and never follows a link at either name.
    static func renameItem(_ source: String, to destination: String) throws(SessionStoreError) {
        if rename(source, destination) != 0 {
            throw .io(operation: "rename", path: destination, code: errno)
        }
    }

    /// `unlink`; nothing there is not an error.
    static func unlinkIfPresent(_ path: String) throws(SessionStoreError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw .io(operation: "unlink", path: path, code: errno)
        }
    }

    /// Takes or releases an advisory lock on `descriptor` (`LOCK_EX` or `LOCK_UN`), waiting if
    /// another process holds it.
    static func lock(_ descriptor: Int32, _ operation: Int32, path: String) throws(SessionStoreError) {
        while flock(descriptor, operation) != 0 {
            if errno == EINTR { continue }
            throw .io(operation: "flock", path: path, code: errno)
        }
    }

    /// Takes an exclusive advisory lock on `descriptor` if no one holds it: `false` at once if
    /// another open file description holds one.
    static func tryLock(_ descriptor: Int32, path: String) throws(SessionStoreError) -> Bool {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK { return false }
            throw .io(operation: "flock", path: path, code: code)
        }
        return true
    }
}
