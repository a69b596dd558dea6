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
/// short read-modify-write at a time across threads and, for stores shared between processes,
/// across processes. It is never held across the network: a refresh records a ``RefreshLease``
/// inside it (``saveLease(_:)``), talks to the server with nothing held, then takes it again to
/// compare, save and clear the lease, so that no two processes present the same refresh token
/// and none waits behind another's network call.
///
/// A store shared between processes also offers a ``changeNotifier``: every process hears a
/// sign-out or a rotation made by another at once. A store used by one process only keeps the
/// defaults (no lease, no notifier): its callers share one refresh within the process.
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

    /// Runs `body` under the same exclusion as ``withExclusiveAccess(_:)`` if it can be had at
    /// once; returns `nil` without running it if another caller (in this process or another)
    /// holds it now. For calls that must return at once, such as a settings toggle on the main
    /// thread: a process suspended inside its exclusive access (iOS suspends an app at any point)
    /// must not freeze another.
    ///
    /// The default answers "not available" (`nil`) without running `body`: a store that cannot
    /// try its exclusive access without waiting is never waited for by a call that must return at
    /// once; the caller does the work on a thread of its own instead. Implement it for a store
    /// whose exclusive access can be tried.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns, or `nil` if exclusive access was not available.
    /// - Throws: ``SessionStoreError`` if access cannot be obtained, or what `body` throws.
    func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result?

    /// The refresh lease recorded by the process presenting the stored refresh token, if any.
    /// Called inside ``withExclusiveAccess(_:)``.
    ///
    /// The default, for stores used by one process only, records no lease and returns `nil`.
    ///
    /// - Returns: The lease, or `nil`.
    /// - Throws: ``SessionStoreError``.
    func loadLease() throws(SessionStoreError) -> RefreshLease?

    /// Records `lease`, or (`nil`) removes the record. Called inside ``withExclusiveAccess(_:)``.
    ///
    /// The default, for stores used by one process only, does nothing.
    ///
    /// - Parameter lease: The lease, or `nil`.
    /// - Throws: ``SessionStoreError``.
    func saveLease(_ lease: RefreshLease?) throws(SessionStoreError)

    /// How other processes sharing the store hear its changes, or `nil` for a store used by one
    /// process only (the default).
    var changeNotifier: (any SessionChangeNotifier)? { get }

    /// The revocations that could not reach the server yet (see ``PendingRevocation``). Called
    /// inside ``withExclusiveAccess(_:)`` to change them, and outside it for a look: replace the
    /// record whole, so that a read never sees half of it.
    ///
    /// The default keeps none: the manager then keeps them in memory, for this process's life.
    ///
    /// - Returns: The records, oldest first.
    /// - Throws: ``SessionStoreError``.
    func loadPendingRevocations() throws(SessionStoreError) -> [PendingRevocation]

    /// Replaces the recorded revocations with `revocations` (none: the record goes). Called
    /// inside ``withExclusiveAccess(_:)``. They hold tokens: store them as carefully as the
    /// session.
    ///
    /// The default does nothing.
    ///
    /// - Parameter revocations: The records.
    /// - Throws: ``SessionStoreError``.
    func savePendingRevocations(_ revocations: [PendingRevocation]) throws(SessionStoreError)
}

extension SessionStore {

    /// `nil`: a store that does not say how to try its exclusive access is never waited for by a
    /// call that must return at once.
    public func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        nil
    }

    /// No lease: a store used by one process only.
    public func loadLease() throws(SessionStoreError) -> RefreshLease? { nil }

    /// Does nothing: a store used by one process only.
    public func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) {}

    /// `nil`: a store used by one process only.
    public var changeNotifier: (any SessionChangeNotifier)? { nil }

    /// None: the manager keeps them in memory.
    public func loadPendingRevocations() throws(SessionStoreError) -> [PendingRevocation] { [] }

    /// Does nothing: the manager keeps them in memory.
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(SessionStoreError) {}
}
