import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The revocations a sign-out could not make yet, in a sibling file of the session's.
extension FileSessionStore {

    /// The revocations that could not reach the server yet, from the sibling file
    /// `session.json.revocations`; none if there is no such file, or if it is not this user's
    /// alone or unreadable (refused, and replaced by the next record).
    ///
    /// - Returns: The records.
    /// - Throws: ``SessionStoreError`` if the file cannot be read.
    public func loadPendingRevocations() throws(SessionStoreError) -> [PendingRevocation] {
        let descriptor: Int32
        do {
            descriptor = try FileSystem.openFile(revocationsPath, O_RDONLY | O_NONBLOCK)
        } catch .io(_, _, let code) where code == ENOENT || code == ENOTDIR {
            return []
        } catch .symbolicLink, .io(_, _, ELOOP) {
            return []
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io(operation: "fstat", path: revocationsPath, code: errno) }
        guard (try? FileSystem.checkPrivate(info, at: revocationsPath, isDirectory: false)) != nil else { return [] }
        let data = try FileSystem.readAll(
            descriptor,
            expectedSize: Int(info.st_size),
            limit: Self.maximumFileSize,
            path: revocationsPath
        )
        guard let document = try? JSONDecoder().decode(RevocationsDocument.self, from: data),
            document.format == RevocationsDocument.formatName, document.version == 1
        else { return [] }
        return document.revocations
    }

    /// Records `revocations` in the sibling file `session.json.revocations` (a new private file
    /// renamed over the old, with the session file's protection), or removes the file when there
    /// are none. Unlike the session file, a sign-out (``remove()``) keeps it: it holds the tokens
    /// of ended sessions until the server has revoked them or they can no longer be valid.
    ///
    /// - Parameter revocations: The records.
    /// - Throws: ``SessionStoreError``; the file is unchanged.
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(SessionStoreError) {
        guard !revocations.isEmpty else {
            try FileSystem.unlinkIfPresent(revocationsPath)
            return
        }
        try FileSystem.ensurePrivateDirectory(directoryPath)
        let document = RevocationsDocument(
            format: RevocationsDocument.formatName,
            version: 1,
            revocations: revocations
        )
        try replaceAtomically(revocationsPath, with: (try? JSONEncoder().encode(document)) ?? Data())
    }

    /// The sibling file of the revocations still to make.
    private var revocationsPath: String { "\(path).revocations" }
}

/// The revocations file: versioned JSON, like the session file.
private struct RevocationsDocument: Codable {
    static let formatName = "AuthSessionKit.revocations"
    var format: String
    var version: Int
    var revocations: [PendingRevocation]
}

/// A store whose look at its pending revocations (``SessionStore/loadPendingRevocations()``
/// outside the exclusive access) never waits: a file read, no lock taken, no prompt. The manager
/// takes that look on its task and starts a thread for a round of revocations only when there is
/// something to revoke.
package protocol QuickPendingRevocationsLook: SessionStore {}

extension FileSessionStore: QuickPendingRevocationsLook {}
