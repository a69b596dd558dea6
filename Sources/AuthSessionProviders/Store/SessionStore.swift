/// Where a session is kept between launches: the middle step of every change (remote → store →
/// runtime).
///
/// Loading tells four outcomes apart, and an app (or the session manager) treats each
/// differently:
///
/// | ``load()`` | Means | Do |
/// | --- | --- | --- |
/// | a session | one is stored | restore it |
/// | `nil` | none is stored | show sign-in |
/// | throws ``SessionStoreError/unavailable(reason:)`` | the storage cannot be read now (a locked device) | keep loading; try again when it is available. Never treat it as "signed out": that is how users get logged out by a launch in the background |
/// | throws ``SessionStoreError/corrupt(reason:setAsideAt:)`` | the stored bytes are not a session; they were moved aside, kept | sign out with the error; the next save starts afresh |
/// | throws anything else | the storage refuses (insecure permissions, a symbolic link, a newer format, an I/O error) | report it; nothing was changed |
///
/// ``save(_:)`` replaces the stored session atomically: a reader sees the old one or the new one,
/// never a mix, even if the process is killed mid-write. ``withExclusiveAccess(_:)`` gives one
/// read-modify-write at a time across threads and, for stores shared between processes, across
/// processes: a refresh loads, calls the server and saves inside it, so that no two callers
/// present the same refresh token.
///
/// Conformers must be thread-safe.
public protocol SessionStore: Sendable {

    /// Reads the stored session.
    ///
    /// - Returns: The session, or `nil` when none is stored.
    /// - Throws: ``SessionStoreError``; see the table above for what each case asks of the caller.
    func load() throws(SessionStoreError) -> ManagedSession?

    /// Stores `session`, replacing any stored one, atomically (and durably, for stores that
    /// can be).
    ///
    /// - Parameter session: The session to keep.
    /// - Throws: ``SessionStoreError``; on failure the stored session is unchanged.
    func save(_ session: ManagedSession) throws(SessionStoreError)

    /// Removes the stored session; does nothing if none is stored.
    ///
    /// - Throws: ``SessionStoreError``; on failure the stored session is unchanged.
    func remove() throws(SessionStoreError)

    /// Runs `body` while no other caller of this method, in this process or (for a store shared
    /// between processes) in another, is running its own.
    ///
    /// Use it for a read-modify-write: load, decide, save, all inside `body`. ``load()``,
    /// ``save(_:)`` and ``remove()`` may be called inside; this method may not (it is not
    /// re-entrant). It waits, blocking the calling thread, while another caller holds access.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns.
    /// - Throws: ``SessionStoreError`` if access cannot be obtained, or what `body` throws.
    func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result
}
