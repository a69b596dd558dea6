import AuthSession
import AuthSessionInterface
import Foundation

/// A delegate that records every callback, in order, and lets a test await them.
///
/// ```swift
/// let recorder = RecordingAuthSessionDelegate()
/// handle.subscribeDelegate(recorder, receive: recorder.queue)
/// provider.publish(.sessionSignIn)
/// let events = try await recorder.waitForEvents(count: 2)
/// ```
///
/// All operations are thread-safe.
public final class RecordingAuthSessionDelegate: AuthSessionDelegate {

    /// One callback as received.
    ///
    /// Its `description` and `dump` show the event and the user's identifier, never the session
    /// itself: an app's own session type may not hide its token.
    public struct Record: Sendable, CustomStringConvertible, CustomReflectable {
        /// The callback.
        public let event: AuthSessionDelegateEvent
        /// The session passed with it.
        public let session: (any AuthSessionProtocol)?
        /// The user passed with it (login and user updates).
        public let user: (any AuthSessionUserProtocol)?
        /// Whether the handle still existed when the callback ran.
        public let hadHandle: Bool

        /// The event's description.
        public var description: String { event.description }

        /// The event, the user's identifier, and whether a session and a handle came with it.
        public var customMirror: Mirror {
            Mirror(
                self,
                children: [
                    "event": event.description,
                    "user": user?.identifier as Any,
                    "hasSession": session != nil,
                    "hadHandle": hadHandle,
                ],
                displayStyle: .struct
            )
        }
    }

    /// A status change with the package's concrete status type.
    public struct StatusChange: Hashable, Sendable, CustomStringConvertible {
        /// The status before.
        public let from: AuthSessionStatus
        /// The status after.
        public let to: AuthSessionStatus

        /// Creates a change.
        ///
        /// - Parameters:
        ///   - from: The status before.
        ///   - to: The status after.
        public init(from: AuthSessionStatus, to: AuthSessionStatus) {
            self.from = from
            self.to = to
        }

        /// `from → to`.
        public var description: String { "\(from) → \(to)" }
    }

    private struct State: WaitableState {
        var records: [Record] = []
        var startingStatuses: [AuthSessionStatus] = []
        var waiters = WaiterList<State>()
    }

    /// A serial queue of the recorder's own; subscribe with it unless a test needs another.
    public let queue: DispatchQueue

    private let state = ConcurrencySafeContainer(State())

    /// Creates a recorder.
    ///
    /// - Parameter label: The label of ``queue``.
    public init(label: String = "RecordingAuthSessionDelegate") {
        queue = DispatchQueue(label: label)
    }

    // MARK: - Reading the record

    /// Every callback received, in order.
    public var records: [Record] {
        state.withLock { $0.records }
    }

    /// Every callback received, as events.
    public var events: [AuthSessionDelegateEvent] {
        records.map(\.event)
    }

    /// Every status change received whose values are `AuthSessionStatus`.
    public var statusChanges: [StatusChange] {
        events.compactMap(Self.statusChange)
    }

    /// The number of callbacks received.
    public var count: Int {
        state.withLock { $0.records.count }
    }

    /// The status each subscription started from (`authentication(_:didStartObservingWith:for:)`),
    /// in order. Kept apart from ``records``: it is not one of the six callbacks, and never a
    /// status change.
    public var startingStatuses: [AuthSessionStatus] {
        state.withLock { $0.startingStatuses }
    }

    /// Returns the status the `number`-th subscription started from (counting from 1), once it has
    /// been received.
    ///
    /// - Parameters:
    ///   - number: Which subscription: `1` for the first.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if it does not arrive in time.
    public func waitForStartingStatus(number: Int = 1, timeout: TimeInterval = 10) async throws -> AuthSessionStatus {
        precondition(number >= 1, "subscriptions are counted from 1")
        try await state.wait(timeout: timeout, for: "subscription \(number)'s starting status") {
            $0.startingStatuses.count >= number
        }
        return startingStatuses[number - 1]
    }

    /// Returns once at least `count` callbacks have been received, and returns them all.
    ///
    /// - Parameters:
    ///   - count: How many callbacks to wait for.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if they do not arrive in time.
    @discardableResult
    public func waitForEvents(count: Int, timeout: TimeInterval = 10) async throws -> [AuthSessionDelegateEvent] {
        try await state.wait(timeout: timeout, for: "\(count) delegate callbacks") { $0.records.count >= count }
        return events
    }

    /// Returns the `number`-th callback (counting from 1), once it has been received.
    ///
    /// - Parameters:
    ///   - number: Which callback: `1` for the first.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if it does not arrive in time.
    public func waitForEvent(number: Int, timeout: TimeInterval = 10) async throws -> AuthSessionDelegateEvent {
        precondition(number >= 1, "callbacks are counted from 1")
        return try await waitForEvents(count: number, timeout: timeout)[number - 1]
    }

    /// Returns once a status change to `status` is in the record: one received at any time since
    /// creation or ``reset()``, including before this call.
    ///
    /// Use it to wait for a status reached once. To wait for the next time the status is entered,
    /// after something the test does now, use ``waitForNextStatus(_:timeout:)`` or
    /// ``waitForStatus(_:after:timeout:)``.
    ///
    /// - Parameters:
    ///   - status: The status to wait for.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if it does not arrive in time.
    public func waitForStatus(_ status: AuthSessionStatus, timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "a change to \(status)") { state in
            state.records.contains { Self.statusChange($0.event)?.to == status }
        }
    }

    /// Returns once a status change to `status` arrives that was not yet in the record when this
    /// was called: the next time the status is entered.
    ///
    /// Call it before the change can be recorded. When the change may already be on its way
    /// (enqueued for the recorder's queue), take ``count`` first and use
    /// ``waitForStatus(_:after:timeout:)``, which leaves no room for a race:
    ///
    /// ```swift
    /// let mark = recorder.count
    /// provider.publish(.sessionSignedOut(error: nil))
    /// try await recorder.waitForStatus(.signedOut, after: mark)
    /// ```
    ///
    /// - Parameters:
    ///   - status: The status to wait for.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if it does not arrive in time.
    public func waitForNextStatus(_ status: AuthSessionStatus, timeout: TimeInterval = 10) async throws {
        try await waitForStatus(status, after: count, timeout: timeout)
    }

    /// Returns once a status change to `status` is in the record after its first `mark` callbacks.
    ///
    /// - Parameters:
    ///   - status: The status to wait for.
    ///   - mark: How many callbacks to skip: ``count`` taken before the action that should cause
    ///     the change.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if it does not arrive in time.
    public func waitForStatus(_ status: AuthSessionStatus, after mark: Int, timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "a change to \(status) after callback \(mark)") { state in
            state.records.dropFirst(mark).contains { Self.statusChange($0.event)?.to == status }
        }
    }

    /// Returns once every callback enqueued on ``queue`` before this call has run.
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }

    /// Forgets every record and starting status.
    public func reset() {
        state.withLock { state in
            state.records = []
            state.startingStatuses = []
        }
    }

    private static func statusChange(_ event: AuthSessionDelegateEvent) -> StatusChange? {
        guard case .sessionStatusChanged(let old, let new) = event,
            let from = old as? AuthSessionStatus, let to = new as? AuthSessionStatus
        else { return nil }
        return StatusChange(from: from, to: to)
    }

    private func record(
        _ event: AuthSessionDelegateEvent,
        _ handle: (any AuthSessionHandleProtocol)?,
        session: (any AuthSessionProtocol)?,
        user: (any AuthSessionUserProtocol)? = nil
    ) {
        let record = Record(event: event, session: session, user: user, hadHandle: handle != nil)
        state.mutateAndNotify { $0.records.append(record) }
    }

    // MARK: - AuthSessionDelegate

    /// Records the status in ``startingStatuses``.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        guard let status = sessionStatus as? AuthSessionStatus else { return }
        state.mutateAndNotify { $0.startingStatuses.append(status) }
    }

    /// Records `.sessionFetch`.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didCompleteFetchWith session: (any AuthSessionProtocol)?,
        isInitialFetch: Bool
    ) {
        record(.sessionFetch(isInitial: isInitialFetch), sessionHandle, session: session)
    }

    /// Records `.sessionStatusChanged`.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        record(.sessionStatusChanged(oldValue: oldStatus, newValue: sessionStatus), sessionHandle, session: session)
    }

    /// Records `.login`.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didLoginWith user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {
        record(.login, sessionHandle, session: session, user: user)
    }

    /// Records `.logout`.
    public func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {
        record(.logout(error: error), sessionHandle, session: nil)
    }

    /// Records `.userUpdate`.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdate user: (any AuthSessionUserProtocol)?,
        for session: (any AuthSessionProtocol)?
    ) {
        record(.userUpdate, sessionHandle, session: session, user: user)
    }

    /// Records `.failure`.
    public func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didFailWith error: AuthSessionError,
        for session: (any AuthSessionProtocol)?
    ) {
        record(.failure(error: error), sessionHandle, session: session)
    }
}
