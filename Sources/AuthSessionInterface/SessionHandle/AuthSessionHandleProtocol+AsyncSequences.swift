import AuthSessionRedaction
import Dispatch

extension AuthSessionHandleProtocol {

    /// Waits for the first status that satisfies `predicate`, starting with the current one.
    ///
    /// ```swift
    /// let settled = try await handle.firstStatus { !$0.isLoadingStatus }
    /// ```
    ///
    /// - Parameter predicate: The condition, for example "not loading" or "signed in".
    /// - Returns: The first matching status.
    /// - Throws: `CancellationError` if the task is cancelled before a status matches (or the
    ///   sequence ends because the handle is gone).
    public func firstStatus(where predicate: @Sendable (SessionStatus) -> Bool) async throws -> SessionStatus {
        for await status in statusUpdates() where predicate(status) {
            return status
        }
        throw CancellationError()
    }

    /// A default for conformers that only implement the delegate API: a private delegate on a
    /// serial queue of its own.
    ///
    /// The status is read just after subscribing and yielded from the delegate's queue unless a
    /// change made meanwhile already reached the delegate: that change is at least as recent as
    /// the read, so the sequence never goes back in time. It may then start with that change
    /// rather than the status before it.
    public func statusUpdates() -> AsyncStream<SessionStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionStatus.self, bufferingPolicy: .unbounded)
        let listener = StreamingDelegate(statuses: continuation)
        let queue = DispatchQueue(label: "AuthSessionHandleProtocol.statusUpdates")
        subscribeDelegate(listener, receive: queue)
        let status = sessionStatus
        queue.async { listener.yieldFirst(status: status) }
        continuation.onTermination = { [weak self] _ in self?.unsubscribeDelegate(listener) }
        return stream
    }

    /// A default for conformers that only implement the delegate API: a private delegate that
    /// forwards every callback.
    public func delegateEvents() -> AsyncStream<AuthSessionDelegateEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: AuthSessionDelegateEvent.self,
            bufferingPolicy: .unbounded
        )
        let listener = StreamingDelegate<SessionStatus>(events: continuation)
        subscribeDelegate(listener, receive: DispatchQueue(label: "AuthSessionHandleProtocol.delegateEvents"))
        continuation.onTermination = { [weak self] _ in self?.unsubscribeDelegate(listener) }
        return stream
    }
}

/// The delegate behind the default async sequences: yields statuses, or every callback as an
/// event. Its callbacks run on one serial queue.
private final class StreamingDelegate<Status: AuthSessionStatusProtocol>: AuthSessionDelegate {

    private let statuses: AsyncStream<Status>.Continuation?
    private let events: AsyncStream<AuthSessionDelegateEvent>.Continuation?
    /// The kind of the last status yielded, to skip repeats.
    private let lastKind = RedactionLock<Int?>(nil)

    init(statuses: AsyncStream<Status>.Continuation) {
        self.statuses = statuses
        self.events = nil
    }

    init(events: AsyncStream<AuthSessionDelegateEvent>.Continuation) {
        self.statuses = nil
        self.events = events
    }

    /// Yields `status` unless it is the same kind as the last one yielded.
    func yield(status: any AuthSessionStatusProtocol) {
        guard let statuses, let status = status as? Status else { return }
        let kind = Self.kind(of: status)
        let isRepeat = lastKind.withLock { last in
            defer { last = kind }
            return last == kind
        }
        if !isRepeat {
            statuses.yield(status)
        }
    }

    /// Yields `status` only if nothing was yielded yet: a status read at subscription, which any
    /// change already delivered supersedes.
    func yieldFirst(status: any AuthSessionStatusProtocol) {
        guard lastKind.withLock({ $0 == nil }) else { return }
        yield(status: status)
    }

    /// Which of the five queries is true, as a number: two statuses of one kind are the same state.
    private static func kind(of status: any AuthSessionStatusProtocol) -> Int {
        [
            status.isSyncing, status.isSignedIn, status.isSignedOut, status.isValidating,
            status.isBiometricAuthentication,
        ]
        .firstIndex(of: true) ?? -1
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        yield(status: sessionStatus)
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didCompleteFetchWith session: (any AuthSessionProtocol)?,
        isInitialFetch: Bool
    ) {
        events?.yield(.sessionFetch(isInitial: isInitialFetch))
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        yield(status: sessionStatus)
        events?.yield(.sessionStatusChanged(oldValue: oldStatus, newValue: sessionStatus))
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didLoginWith user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {
        events?.yield(.login)
    }

    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {
        events?.yield(.logout(error: error))
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdate user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {
        events?.yield(.userUpdate)
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didFailWith error: AuthSessionError,
        for session: (any AuthSessionProtocol)?
    ) {
        events?.yield(.failure(error: error))
    }
}
