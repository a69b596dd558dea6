import AuthSession

/// A ``SessionStore`` in memory: nothing survives the process.
///
/// For previews, tests, and clients that must not persist a session (a kiosk, a one-shot
/// command). Exclusive access is exclusive within the process only, which is all a store that
/// no other process can see needs.
///
/// All operations are thread-safe.
public final class InMemorySessionStore: SessionStore {

    private let session: ConcurrencySafeContainer<ManagedSession?>
    // A one-byte value, not `()`: a zero-size value shares its address with the lock, and
    // ThreadSanitizer then reports the lock's own read as a race on it.
    private let exclusive = ConcurrencySafeContainer<UInt8>(0)

    /// Creates a store holding `session`.
    ///
    /// - Parameter session: The stored session, if any.
    public init(session: ManagedSession? = nil) {
        self.session = ConcurrencySafeContainer(session)
    }

    /// The stored session, or `nil`.
    public func load() throws(SessionStoreError) -> ManagedSession? {
        session.withLock { $0 }
    }

    /// Replaces the stored session.
    ///
    /// - Parameter session: The session to keep.
    public func save(_ session: ManagedSession) throws(SessionStoreError) {
        self.session.withLock { $0 = session }
    }

    /// Forgets the stored session.
    public func remove() throws(SessionStoreError) {
        session.withLock { $0 = nil }
    }

    /// Runs `body` while no other caller of this method runs its own. Not re-entrant.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try exclusive.withLock { _ in try body() }
    }

    /// Runs `body` if no other caller holds exclusive access now; returns `nil` without waiting if
    /// one does.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns, or `nil`.
    /// - Throws: What `body` throws.
    public func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        try exclusive.withLockIfAvailable { _ in try body() }
    }
}
