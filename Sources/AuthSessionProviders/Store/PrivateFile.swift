import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A small file read and replaced with the file store's care, for the package's other modules
/// (the OAuth 2.0 discovery cache): never through a symbolic link, only when it and its folder are
/// this user's alone, replaced by a rename so a reader sees the old bytes or the new ones.
package enum PrivateFile {

    /// The bytes of the file at `path` in the folder `directory`.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - directory: Its folder's path.
    ///   - limit: The most bytes read; a larger file comes back as `limit + 1` bytes.
    /// - Returns: The bytes, or `nil` when the folder or the file does not exist.
    /// - Throws: ``SessionStoreError``: `.symbolicLink`, `.insecurePermissions`, `.foreignOwner`,
    ///   `.notARegularFile` (the file or the folder), or `.io`.
    package static func read(_ path: String, in directory: String, limit: Int) throws(SessionStoreError) -> Data? {
        guard let folder = try FileSystem.status(of: directory) else { return nil }
        try FileSystem.checkPrivate(folder, at: directory, isDirectory: true)
        let descriptor: Int32
        do {
            descriptor = try FileSystem.openFile(path, O_RDONLY | O_NONBLOCK)
        } catch .io(_, _, let code) where code == ENOENT {
            return nil
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io(operation: "fstat", path: path, code: errno) }
        try FileSystem.checkPrivate(info, at: path, isDirectory: false)
        return try FileSystem.readAll(descriptor, expectedSize: Int(info.st_size), limit: limit, path: path)
    }

    /// Replaces the file at `path` in the folder `directory` with `data`: a new file of mode 0600
    /// (with the file store's safeguards on Apple platforms) is written, made durable and renamed
    /// over it. The folder is created with mode 0700 if missing. Whatever was at `path` (a link, a
    /// file of another mode) is replaced, never followed.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - directory: Its folder's path.
    ///   - data: The new bytes.
    /// - Throws: ``SessionStoreError``; the file is then unchanged. A folder that is not private
    ///   is refused.
    package static func replace(_ path: String, in directory: String, with data: Data) throws(SessionStoreError) {
        try FileSystem.ensurePrivateDirectory(directory)
        let name = (path as NSString).lastPathComponent
        let temporary = "\(directory)/.\(name).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = try FileSystem.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        var isOpen = true
        do {
            try FileSafeguarding.platform.apply(to: temporary)
            try FileSystem.writeAll(data, to: descriptor, path: temporary)
            try FileSystem.synchronize(descriptor, path: temporary)
            close(descriptor)
            isOpen = false
            try FileSystem.renameItem(temporary, to: path)
        } catch {
            if isOpen { close(descriptor) }
            try? FileSystem.unlinkIfPresent(temporary)
            throw error
        }
    }
}
