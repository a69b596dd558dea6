import AuthSession
import AuthSessionProviders
import Foundation

/// A session store a test controls: it keeps a session in memory, counts every call, and fails
/// on command the way real storage does.
///
/// ```swift
/// let store = MockSessionStore(session: session)
/// store.isUnavailable = true      // a locked device: every call throws .unavailable
/// store.failsWrites = true        // save and remove throw .io, the stored session is unchanged
/// store.corruptNextLoad()         // the next load throws .corrupt and the session is set aside
/// ```
///
/// It records refresh leases, and with `postsChangeNotices` every write is a change notice: several
/// managers sharing one instance then behave as processes sharing a store.
///
/// All operations are thread-safe.
public final class MockSessionStore: SessionStore {

    private struct State: WaitableState {
        var session: ManagedSession?
        var isUnavailable = false
        var failsWrites = false
        var corruptsNextLoad = false
        var loadCount = 0
        var saveCount = 0
        var removeCount = 0
        var exclusiveAccessCount = 0
        var savedSessions: [ManagedSession] = []
        var lease: RefreshLease?
        var leasesRecorded = 0
        var pendingRevocations: [PendingRevocation] = []
        var waiters = WaiterList<State>()
    }

    private let state: ConcurrencySafeContainer<State>
    // A one-byte value, not `()`: a zero-size value shares its address with the lock, and
    // ThreadSanitizer then reports the lock's own read as a race on it.
    private let exclusive = ConcurrencySafeContainer<UInt8>(0)

    private let notifier: LocalChangeNotifier?

    /// Creates a store holding `session`.
    ///
    /// - Parameters:
    ///   - session: The stored session, if any.
    ///   - postsChangeNotices: Whether every write (a save, a removal, a lease) is a change
    ///     notice for the managers sharing this store, as a file store's are between processes.
    public init(session: ManagedSession? = nil, postsChangeNotices: Bool = false) {
        state = ConcurrencySafeContainer(State(session: session))
        notifier = postsChangeNotices ? LocalChangeNotifier() : nil
    }

    /// The notices of writes, when created with `postsChangeNotices`.
    public var changeNotifier: (any SessionChangeNotifier)? { notifier }

    /// The recorded refresh lease.
    ///
    /// - Returns: The lease, or `nil`.
    /// - Throws: `.unavailable` while unavailable.
    public func loadLease() throws(SessionStoreError) -> RefreshLease? {
        let result = state.withLock { state -> Result<RefreshLease?, SessionStoreError> in
            state.isUnavailable
                ? .failure(.unavailable(reason: "the mock store is unavailable")) : .success(state.lease)
        }
        return try result.get()
    }

    /// Records `lease`, or removes the record.
    ///
    /// - Parameter lease: The lease, or `nil`.
    /// - Throws: `.unavailable` while unavailable.
    public func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) {
        let result = state.mutateAndNotify { state -> Result<Void, SessionStoreError> in
            if state.isUnavailable { return .failure(.unavailable(reason: "the mock store is unavailable")) }
            state.lease = lease
            if lease != nil { state.leasesRecorded += 1 }
            return .success(())
        }
        try result.get()
        notifier?.post()
    }

    /// The lease recorded now, read without failing.
    public var storedLease: RefreshLease? { state.withLock { $0.lease } }

    /// How many leases were recorded.
    public var leasesRecorded: Int { state.withLock { $0.leasesRecorded } }

    /// The recorded revocations that could not reach the server yet.
    ///
    /// - Returns: The records.
    /// - Throws: `.unavailable` while unavailable.
    public func loadPendingRevocations() throws(SessionStoreError) -> [PendingRevocation] {
        let result = state.withLock { state -> Result<[PendingRevocation], SessionStoreError> in
            state.isUnavailable
                ? .failure(.unavailable(reason: "the mock store is unavailable")) : .success(state.pendingRevocations)
        }
        return try result.get()
    }

    /// Replaces the recorded revocations.
    ///
    /// - Parameter revocations: The records.
    /// - Throws: `.unavailable` while unavailable.
    public func savePendingRevocations(_ revocations: [PendingRevocation]) throws(SessionStoreError) {
        let result = state.mutateAndNotify { state -> Result<Void, SessionStoreError> in
            if state.isUnavailable { return .failure(.unavailable(reason: "the mock store is unavailable")) }
            state.pendingRevocations = revocations
            return .success(())
        }
        try result.get()
    }

    /// The revocations recorded now (for tests).
    public var pendingRevocations: [PendingRevocation] { state.withLock { $0.pendingRevocations } }

    /// Records `lease` as another process would, or removes it: a test's way to stand for a
    /// process holding (or having left) a lease.
    ///
    /// - Parameter lease: The lease, or `nil`.
    public func recordLease(_ lease: RefreshLease?) {
        state.mutateAndNotify { $0.lease = lease }
        notifier?.post()
    }

    /// Replaces the stored session as another process would, and posts a change notice (with
    /// `postsChangeNotices`); not counted as a save.
    ///
    /// - Parameter session: The session, or `nil` to remove it.
    public func replaceStoredSession(_ session: ManagedSession?) {
        state.mutateAndNotify { $0.session = session }
        notifier?.post()
    }

    // MARK: - Scripted failures

    /// While `true`, every call throws `SessionStoreError.unavailable`, as a Keychain
    /// does while the device is locked. The stored session is kept.
    public var isUnavailable: Bool {
        get { state.withLock { $0.isUnavailable } }
        set { state.withLock { $0.isUnavailable = newValue } }
    }

    /// While `true`, ``save(_:)`` and ``remove()`` throw `.io` (`EIO`) and change nothing.
    public var failsWrites: Bool {
        get { state.withLock { $0.failsWrites } }
        set { state.withLock { $0.failsWrites = newValue } }
    }

    /// The next ``load()`` throws `SessionStoreError.corrupt` and forgets
    /// the stored session, as a file store sets corrupt bytes aside.
    public func corruptNextLoad() {
        state.withLock { $0.corruptsNextLoad = true }
    }

    // MARK: - SessionStore

    /// The stored session, or the scripted failure. Counted.
    public func load() throws(SessionStoreError) -> ManagedSession? {
        let result = state.mutateAndNotify { state -> Result<ManagedSession?, SessionStoreError> in
            state.loadCount += 1
            if state.isUnavailable { return .failure(.unavailable(reason: "the mock store is unavailable")) }
            if state.corruptsNextLoad {
                state.corruptsNextLoad = false
                state.session = nil
                return .failure(
                    .corrupt(reason: "the mock store was told to be corrupt", setAsideAt: "mock-store.corrupt")
                )
            }
            return .success(state.session)
        }
        return try result.get()
    }

    /// Stores `session`, or throws the scripted failure. Counted; every stored session is kept in
    /// ``savedSessions``.
    ///
    /// - Parameter session: The session to keep.
    public func save(_ session: ManagedSession) throws(SessionStoreError) {
        let result = state.mutateAndNotify { state -> Result<Void, SessionStoreError> in
            state.saveCount += 1
            if state.isUnavailable { return .failure(.unavailable(reason: "the mock store is unavailable")) }
            if state.failsWrites { return .failure(.io(operation: "write", path: "mock-store", code: EIO)) }
            state.session = session
            state.savedSessions.append(session)
            return .success(())
        }
        try result.get()
        notifier?.post()
    }

    /// Forgets the stored session, or throws the scripted failure. Counted.
    public func remove() throws(SessionStoreError) {
        let result = state.mutateAndNotify { state -> Result<Void, SessionStoreError> in
            state.removeCount += 1
            if state.isUnavailable { return .failure(.unavailable(reason: "the mock store is unavailable")) }
            if state.failsWrites { return .failure(.io(operation: "unlink", path: "mock-store", code: EIO)) }
            state.session = nil
            return .success(())
        }
        try result.get()
        notifier?.post()
    }

    /// Runs `body` while no other caller of this method runs its own. Counted. Not re-entrant.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns.
    /// - Throws: `.unavailable` while unavailable, or what `body` throws.
    public func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        let isUnavailable = state.mutateAndNotify { state in
            state.exclusiveAccessCount += 1
            return state.isUnavailable
        }
        if isUnavailable { throw SessionStoreError.unavailable(reason: "the mock store is unavailable") }
        return try exclusive.withLock { _ in try body() }
    }

    /// ``withExclusiveAccess(_:)`` if no other caller holds it now; `nil` without waiting if one
    /// does. Counted.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns, or `nil`.
    /// - Throws: `.unavailable` while unavailable, or what `body` throws.
    public func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        let isUnavailable = state.mutateAndNotify { state in
            state.exclusiveAccessCount += 1
            return state.isUnavailable
        }
        if isUnavailable { throw SessionStoreError.unavailable(reason: "the mock store is unavailable") }
        return try exclusive.withLockIfAvailable { _ in try body() }
    }

    // MARK: - History

    /// The stored session, read without counting a load or failing.
    public var storedSession: ManagedSession? {
        state.withLock { $0.session }
    }

    /// Every session saved, in order.
    public var savedSessions: [ManagedSession] {
        state.withLock { $0.savedSessions }
    }

    /// How many times ``load()`` was called.
    public var loadCount: Int { state.withLock { $0.loadCount } }

    /// How many times ``save(_:)`` was called (failed calls included).
    public var saveCount: Int { state.withLock { $0.saveCount } }

    /// How many times ``remove()`` was called (failed calls included).
    public var removeCount: Int { state.withLock { $0.removeCount } }

    /// How many times ``withExclusiveAccess(_:)`` was called.
    public var exclusiveAccessCount: Int { state.withLock { $0.exclusiveAccessCount } }

    /// Returns once ``saveCount`` reaches `count`.
    ///
    /// - Parameters:
    ///   - count: The number of save calls to wait for.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if they do not happen in time.
    public func waitForSaveCount(_ count: Int, timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "\(count) saves") { $0.saveCount >= count }
    }

    /// Forgets the counts and the saved sessions; keeps the stored session and the failures.
    public func reset() {
        state.withLock { state in
            state.loadCount = 0
            state.saveCount = 0
            state.removeCount = 0
            state.exclusiveAccessCount = 0
            state.savedSessions = []
        }
    }
}
