import AuthSession
import AuthSessionInterface
import Foundation

/// What happened to a ``ManagedSessionProvider``'s session, in an element of
/// ``ManagedSessionProvider/sessionChanges``.
///
/// The "Observing the session" article maps these to the provider's events, the delegate's
/// callbacks and the handle's streams.
///
/// All operations are thread-safe.
public enum ManagedSessionEvent: Sendable, CustomStringConvertible, CustomReflectable {

    /// The session as the launch found it: the first element of every iteration. Never sent
    /// before the launch finished reading the store (and refreshing a session that was due), so a
    /// signed-in user never sees `nil` here first. When a sign-in commits before the launch
    /// finished, it carries the signed-in session and ``signedIn`` follows; when a sign-out
    /// does, it carries `nil` and no ``signedOut(_:)`` follows.
    case initialSession

    /// A user signed in.
    case signedIn

    /// The tokens changed: a refresh, or a rotation another process sharing the store made.
    case tokenRefreshed

    /// The session changed without new tokens: profile fields, the biometric setting.
    case userUpdated

    /// The session ended, and why.
    case signedOut(SignOutCause)

    /// The event's name, with the cause of a sign-out; never a token.
    public var description: String {
        switch self {
        case .initialSession: "initialSession"
        case .signedIn: "signedIn"
        case .tokenRefreshed: "tokenRefreshed"
        case .userUpdated: "userUpdated"
        case .signedOut(let cause): "signedOut(\(cause))"
        }
    }

    /// The description only: `dump` never walks into an underlying error.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}

/// Why a session ended.
///
/// All operations are thread-safe.
public enum SignOutCause: Sendable, CustomStringConvertible, CustomReflectable {

    /// The app signed out (``ManagedSessionProvider/signout(with:)`` without an error).
    case voluntary

    /// The app signed out with a reason of its own (a failed biometric check, say): match its
    /// error with ``SignOutReason/error``.
    case requested(reason: SignOutReason)

    /// The access token is spent and there is no refresh token
    /// (``ManagedSessionError/refreshUnavailable``).
    case expired

    /// The server ended the session: it refused the refresh token (`invalid_grant`), or answered
    /// with another user's tokens.
    case endedByServer(RemoteAuthError)

    /// The backend says the credential no longer stands (checked, or pushed).
    case credentialRevoked(CredentialState)

    /// A process sharing the store signed out, or signed in as someone else.
    case signedOutElsewhere

    /// The user deleted their account (``ManagedSessionProvider/deleteAccount()``).
    case accountDeleted

    /// Another of the manager's reasons (``ManagedSessionError``).
    case failed(ManagedSessionError)

    /// The cause of a sign-out whose event carried `error` (`nil` for a voluntary one).
    init(error: (any Error)?) {
        switch error {
        case nil: self = .voluntary
        case let error as ManagedSessionError:
            switch error {
            case .refreshUnavailable: self = .expired
            case .remote(let remote): self = .endedByServer(remote)
            case .credentialRevoked(let state): self = .credentialRevoked(state)
            case .signedOutElsewhere: self = .signedOutElsewhere
            case .accountDeleted: self = .accountDeleted
            default: self = .failed(error)
            }
        case let error?: self = .requested(reason: SignOutReason(error))
        }
    }

    /// The error behind the cause, if any: what `AuthSessionDelegate` callbacks receive.
    public var error: (any Error)? {
        switch self {
        case .voluntary: nil
        case .requested(let reason): reason.error
        case .expired: ManagedSessionError.refreshUnavailable
        case .endedByServer(let error): ManagedSessionError.remote(error)
        case .credentialRevoked(let state): ManagedSessionError.credentialRevoked(state)
        case .signedOutElsewhere: ManagedSessionError.signedOutElsewhere
        case .accountDeleted: ManagedSessionError.accountDeleted
        case .failed(let error): error
        }
    }

    /// The cause's name and its token-free detail.
    public var description: String {
        switch self {
        case .voluntary: "voluntary"
        case .requested(let reason): "requested(\(reason))"
        case .expired: "expired"
        case .endedByServer(let error): "endedByServer(\(error))"
        case .credentialRevoked(let state): "credentialRevoked(\(state))"
        case .signedOutElsewhere: "signedOutElsewhere"
        case .accountDeleted: "accountDeleted"
        case .failed(let error): "failed(\(error))"
        }
    }

    /// The description only: `dump` never walks into an underlying error.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}

/// The app's own reason for a sign-out (``SignOutCause/requested(reason:)``): its error, and its
/// text rendered once, when the sign-out was decided.
///
/// The text is rendered while the ended session's tokens are still registered with
/// `SecretRedactor`, so a token the error quotes is redacted even when the text is printed
/// long after the sign-out (when those tokens are no longer registered). Only the session's
/// tokens of that moment are registered: a token it held before (one a refresh replaced, which
/// may still be live) is caught only by its shape, so register such a token yourself
/// (`SecretRedactor.register(_:)`) if your errors quote it. Every rendering
/// (`description`, `String(reflecting:)`, `dump`, and the ``SignOutCause`` and observation that
/// carry it) shows that text only; ``error`` is the app's value, for matching
/// (`reason.error is MyError`), and printing it yourself renders it anew, unredacted.
///
/// All operations are thread-safe.
public struct SignOutReason: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {

    /// The error the app passed to ``ManagedSessionProvider/signout(with:)``.
    public let error: any Error

    /// `TypeName: text`, with every secret registered when it was rendered redacted.
    public let description: String

    /// Renders `error` now: call it while the secrets it may quote are registered.
    ///
    /// - Parameter error: The app's reason.
    public init(_ error: any Error) {
        self.error = error
        self.description = "\(type(of: error)): \(SecretRedactor.redact("\(error)"))"
    }

    /// The rendered text, as ``description``.
    public var debugDescription: String { description }

    /// The rendered text only: `dump` never walks into the error.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .struct)
    }
}

/// The session's changes as an `AsyncSequence` of `(event, session)`: see
/// ``ManagedSessionProvider/sessionChanges``.
///
/// Each iteration (each `makeAsyncIterator()`) is a subscriber of its own: it starts with
/// ``ManagedSessionEvent/initialSession`` and then sees every later change, in the order the
/// manager committed them. It ends when its task is cancelled or the manager is released.
///
/// All operations are thread-safe.
public struct ManagedSessionChanges: AsyncSequence, Sendable {

    /// One change: what happened, and the session right after it (`nil` when signed out).
    public typealias Element = (event: ManagedSessionEvent, session: ManagedSession?)

    /// Never fails.
    public typealias Failure = Never

    let hub: SessionChangeHub

    /// Subscribes: the iterator's first element is ``ManagedSessionEvent/initialSession``.
    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: SessionChangeSubscription(hub: hub))
    }

    /// Reads one subscriber's changes. Use it from one task at a time, as any iterator.
    ///
    /// All operations are thread-safe.
    public struct Iterator: AsyncIteratorProtocol, Sendable {

        let subscription: SessionChangeSubscription

        /// The next change, or `nil` once the task is cancelled or the manager released.
        public mutating func next() async -> Element? {
            await subscription.next()
        }

        /// The next change, or `nil` once the task is cancelled or the manager released.
        ///
        /// - Parameter actor: The caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await subscription.next()
        }
    }
}

/// An iterator's registration; ends it when the iterator goes.
final class SessionChangeSubscription: Sendable {
    let hub: SessionChangeHub
    let id: UInt64

    init(hub: SessionChangeHub) {
        self.hub = hub
        self.id = hub.subscribe()
    }

    deinit {
        hub.unsubscribe(id)
    }

    func next() async -> ManagedSessionChanges.Element? {
        await hub.next(for: id)
    }
}

/// Fans the manager's committed changes out to every subscriber, in commit order.
///
/// ``publish(_:session:)`` is called by one thread at a time (the manager's drain of its outbox,
/// which is in commit order). A subscriber's changes go into its own unbounded buffer under the
/// lock; a subscriber waiting for one is resumed after the lock is released. Nothing here runs
/// a subscriber's code: its loop runs in its own task, so it may call the manager back.
final class SessionChangeHub: Sendable {

    fileprivate struct Subscriber {
        var buffer: [ManagedSessionChanges.Element] = []
        var waiter: CheckedContinuation<ManagedSessionChanges.Element?, Never>?
    }

    fileprivate struct State {
        /// Whether the launch has finished: subscribers get their initial element.
        var isLaunched = false
        /// The session after the last change published.
        var current: ManagedSession?
        var subscribers: [UInt64: Subscriber] = [:]
        var lastID: UInt64 = 0
        /// The manager is gone: every subscriber ends once its buffer is read.
        var isFinished = false
        /// Every change published, in order, when a test asked for it.
        var log: [ManagedSessionChanges.Element]?
        /// How long the log was when each subscriber joined (for tests).
        var logPositions: [UInt64: Int] = [:]
        /// Callers of ``SessionChangeHub/waitUntilHandled(timeout:)``, resumed with `true` once
        /// every subscriber is waiting for its next change with nothing buffered.
        var handledWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var lastHandledWaiterID: UInt64 = 0

        /// Whether every iteration took every change published and asked for the next one.
        var isHandled: Bool {
            subscribers.values.allSatisfy { $0.buffer.isEmpty && $0.waiter != nil }
        }

        /// The callers to resume now that every iteration may have handled its changes.
        mutating func takeHandledWaitersIfHandled() -> [CheckedContinuation<Bool, Never>] {
            guard !handledWaiters.isEmpty, isHandled else { return [] }
            defer { handledWaiters = [:] }
            return Array(handledWaiters.values)
        }
    }

    private let state = ConcurrencySafeContainer(State())

    /// Registers a subscriber; its buffer starts with the initial element if the launch finished.
    func subscribe() -> UInt64 {
        state.withLock { state in
            state.lastID += 1
            var subscriber = Subscriber()
            if state.isLaunched {
                subscriber.buffer.append((.initialSession, state.current))
            }
            if !state.isFinished {
                state.subscribers[state.lastID] = subscriber
            }
            if let log = state.log { state.logPositions[state.lastID] = log.count }
            return state.lastID
        }
    }

    /// Ends a subscriber: a waiting `next()` returns `nil`.
    func unsubscribe(_ id: UInt64) {
        let (waiter, handled) = state.withLock { state in
            (state.subscribers.removeValue(forKey: id)?.waiter, state.takeHandledWaitersIfHandled())
        }
        waiter?.resume(returning: nil)
        for caller in handled { caller.resume(returning: true) }
    }

    /// Whether every subscriber took every change published so far and waits for its next one.
    var isHandled: Bool {
        state.withLock { $0.isHandled }
    }

    /// Waits until every subscriber took every change published so far and waits for its next
    /// one (its loop's body for them has run), or until `timeout` seconds passed.
    ///
    /// - Returns: `false` if the time ran out first.
    func waitUntilHandled(timeout: TimeInterval) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state -> UInt64? in
                guard !state.isHandled else { return nil }
                state.lastHandledWaiterID += 1
                state.handledWaiters[state.lastHandledWaiterID] = continuation
                return state.lastHandledWaiterID
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            // Wall time, not the manager's clock: a test's manual clock would never end the wait.
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [self] in
                let late = state.withLock { $0.handledWaiters.removeValue(forKey: id) }
                late?.resume(returning: false)
            }
        }
    }

    /// The subscriber's next change, waiting for one; `nil` once cancelled or finished.
    func next(for id: UInt64) async -> ManagedSessionChanges.Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<ManagedSessionChanges.Element?, Never>) in
                let ready = state.withLock { state -> ManagedSessionChanges.Element?? in
                    guard !Task.isCancelled, var subscriber = state.subscribers[id] else { return .some(nil) }
                    if !subscriber.buffer.isEmpty {
                        let element = subscriber.buffer.removeFirst()
                        state.subscribers[id] = subscriber
                        return .some(element)
                    }
                    if state.isFinished {
                        state.subscribers[id] = nil
                        return .some(nil)
                    }
                    subscriber.waiter = continuation
                    state.subscribers[id] = subscriber
                    return .none
                }
                if let ready {
                    continuation.resume(returning: ready)
                } else {
                    // Waiting with nothing buffered: this iteration handled what it was sent.
                    let handled = state.withLock { $0.takeHandledWaitersIfHandled() }
                    for caller in handled { caller.resume(returning: true) }
                }
            }
        } onCancel: {
            unsubscribe(id)
        }
    }

    /// Publishes one event of the manager's outbox, with the runtime session as it was when the
    /// event was queued, and for a sign-out the cause rendered when it was decided (made from
    /// the event's error when `nil`).
    ///
    /// - Returns: The changes the event made (none, one, or an initial element and a sign-in).
    @discardableResult
    func publish(
        _ event: AuthSessionEvent,
        session: ManagedSession?,
        cause: SignOutCause? = nil
    ) -> [ManagedSessionChanges.Element] {
        let (changes, wakes) = state.withLock { state -> ([ManagedSessionChanges.Element], [Wake]) in
            let changes = state.changes(for: event, session: session, cause: cause)
            guard !changes.isEmpty else { return ([], []) }
            state.log?.append(contentsOf: changes)
            var wakes: [Wake] = []
            for id in state.subscribers.keys {
                var pending = changes[...]
                if let waiter = state.subscribers[id]?.waiter, let first = pending.popFirst() {
                    state.subscribers[id]?.waiter = nil
                    wakes.append(Wake(waiter: waiter, element: first))
                }
                state.subscribers[id]?.buffer.append(contentsOf: pending)
            }
            return (changes, wakes)
        }
        // Outside the lock: resuming a waiter only schedules its task.
        for wake in wakes {
            wake.waiter.resume(returning: wake.element)
        }
        return changes
    }

    /// A waiting subscriber and the change that ends its wait.
    private struct Wake {
        let waiter: CheckedContinuation<ManagedSessionChanges.Element?, Never>
        let element: ManagedSessionChanges.Element
    }

    /// Ends every subscriber once it has read its buffer: the manager is gone.
    func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<ManagedSessionChanges.Element?, Never>] in
            state.isFinished = true
            var waiters: [CheckedContinuation<ManagedSessionChanges.Element?, Never>] = []
            for id in state.subscribers.keys {
                if let waiter = state.subscribers[id]?.waiter {
                    waiters.append(waiter)
                    state.subscribers[id] = nil
                }
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
        let handled = state.withLock { $0.takeHandledWaitersIfHandled() }
        for caller in handled { caller.resume(returning: true) }
    }

    /// How many subscribers are registered (for tests).
    var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Starts recording every change published (for tests).
    func startLog() {
        state.withLock { $0.log = $0.log ?? [] }
    }

    /// How many changes the log held when subscriber `id` joined (for tests).
    func logPosition(of id: UInt64) -> Int? {
        state.withLock { $0.logPositions[id] }
    }

    /// Every change published since ``startLog()`` (for tests).
    var log: [ManagedSessionChanges.Element] {
        state.withLock { $0.log ?? [] }
    }
}

extension SessionChangeHub.State {

    /// The stream's changes for one event of the manager's outbox (see the "Observing the
    /// session" article): the first event that ends the launch gives the initial element; a
    /// sign-in, a change of tokens or of the user, and a sign-out of a session give one each;
    /// the rest (fetching, failures that leave the session as it is) give none.
    fileprivate mutating func changes(
        for event: AuthSessionEvent,
        session: ManagedSession?,
        cause: SignOutCause?
    ) -> [ManagedSessionChanges.Element] {
        switch event {
        case .fetchingSession, .unexpectedError, .sessionFetched(isInitialFetch: false):
            return []
        case .sessionFetched(isInitialFetch: true), .sessionFetchFailed:
            // The launch's end: a stored session (refreshed first when it was due), none, or a
            // store that refused; a refresh failing later changes nothing.
            guard !isLaunched else { return [] }
            isLaunched = true
            current = session
            return [(.initialSession, session)]
        case .sessionSignIn:
            var changes: [ManagedSessionChanges.Element] = []
            if !isLaunched {
                // Signed in before the launch finished (before it read the store, or while it
                // refreshed a stored session): the first element is the session as it is now,
                // never a signed-out flash; the sign-in follows, so a subscriber that joined
                // before still hears of it.
                isLaunched = true
                changes.append((.initialSession, session))
            }
            current = session
            changes.append((.signedIn, session))
            return changes
        case .sessionSignedOut(let error):
            if !isLaunched {
                // The launch ended signed out (a spent session, a corrupt store), or the app
                // signed out before it finished: a subscriber never saw a session, so nothing
                // ended for it.
                isLaunched = true
                current = nil
                return [(.initialSession, nil)]
            }
            // Signing out with nobody signed in changes nothing.
            guard current != nil else { return [] }
            current = nil
            return [(.signedOut(cause ?? SignOutCause(error: error)), nil)]
        case .sessionUpdated:
            guard isLaunched, let session, let previous = current, session != previous else { return [] }
            current = session
            let event: ManagedSessionEvent =
                previous.accessToken != session.accessToken ? .tokenRefreshed : .userUpdated
            return [(event, session)]
        }
    }
}

extension ManagedSessionProvider {

    /// The session's changes as `(event, session)`: the current session first
    /// (``ManagedSessionEvent/initialSession``), then every ``ManagedSessionEvent/signedIn``,
    /// ``ManagedSessionEvent/tokenRefreshed``, ``ManagedSessionEvent/userUpdated`` and
    /// ``ManagedSessionEvent/signedOut(_:)``, in the order the manager committed them.
    ///
    /// ```swift
    /// for await (event, session) in provider.sessionChanges {
    ///     switch event {
    ///     case .initialSession, .signedIn: showHome(session)   // session is nil: show sign-in
    ///     case .signedOut(let cause): showSignIn(cause)
    ///     case .tokenRefreshed, .userUpdated: update(session)
    ///     }
    /// }
    /// ```
    ///
    /// - The first element waits for the launch to finish: a stored session is read (and
    ///   refreshed first if it was due) before it is sent, so a signed-in user never sees a
    ///   signed-out first element. While the store is unavailable (a locked device) it waits.
    ///   The launch starts when a handle is created with the manager.
    /// - A change that commits before the launch finished (before a handle exists, while the
    ///   store is locked, or while the launch refreshes a due session) ends the wait: a sign-in
    ///   gives ``ManagedSessionEvent/initialSession`` with the signed-in session, then
    ///   ``ManagedSessionEvent/signedIn`` with it (never a signed-out first element while someone
    ///   is signed in, and a subscriber that joined before still hears of the sign-in); a
    ///   sign-out gives ``ManagedSessionEvent/initialSession`` with `nil` and no
    ///   ``ManagedSessionEvent/signedOut(_:)`` (the subscriber never saw the session it ended).
    /// - Every iteration is a subscriber: it sees every change after its initial element, none
    ///   lost or reordered, however many subscribers there are.
    /// - A slow subscriber does not slow the manager or other subscribers: its changes wait in a
    ///   buffer of its own, without a bound (changes are rare: a sign-in, a refresh an hour).
    /// - Nothing is delivered under a lock: the loop's body runs in its own task and may call
    ///   the manager (``signIn(with:)``, ``refresh()``, ``signout(with:)``).
    /// - The iteration ends when its task is cancelled (at once while it waits for a change; a
    ///   body that runs ends it by asking for the next) or the manager is released.
    public var sessionChanges: ManagedSessionChanges {
        ManagedSessionChanges(hub: instrumentation.changes)
    }

    /// Waits until the manager is idle (``waitUntilIdle()``), then until every iteration of
    /// ``sessionChanges`` took every change published and asked for its next one: a loop whose
    /// body handles a change without suspending (a view model setting its state) has handled
    /// them all. For tests of code that derives its state from the stream:
    ///
    /// ```swift
    /// try await provider.signIn(with: grant)
    /// await provider.waitUntilSessionChangesHandled()
    /// #expect(model.screen == .home)
    /// ```
    ///
    /// An iteration that suspends inside its body (awaiting something else) counts as busy until
    /// it asks for its next change, even if its task was cancelled meanwhile; one that stops
    /// asking without ending holds the wait until `timeout`. A body that starts work on the
    /// manager (a refresh it does not await) is waited for too: the call returns once the manager
    /// is idle and every iteration handled its changes, both at once. The whole wait, the
    /// manager's idleness included, lasts at most `timeout`. A loop whose task has not made its iterator yet is not waited for: start the
    /// loop (and let it take its first element) before the change you test.
    ///
    /// - Parameter timeout: The longest wait, in seconds of wall time (not the manager's clock);
    ///   10 by default.
    /// - Returns: `false` if the manager or an iteration was still busy when the time ran out.
    @discardableResult
    public func waitUntilSessionChangesHandled(timeout: TimeInterval = 10) async -> Bool {
        let deadline = ProcessInfo.processInfo.systemUptime + max(0, timeout)
        func remaining() -> TimeInterval { max(0, deadline - ProcessInfo.processInfo.systemUptime) }
        // A loop's body may start work on the manager (a refresh it does not await) before it
        // asks for its next change: idle and handled must hold together, so both are waited for
        // again until they do.
        while true {
            guard await waitUntilIdle(timeout: remaining()) else { return false }
            guard await instrumentation.changes.waitUntilHandled(timeout: remaining()) else { return false }
            let now = clock.now
            if state.withLock({ $0.isIdle(now: now) }), instrumentation.changes.isHandled { return true }
            if remaining() <= 0 { return false }
        }
    }

    /// ``waitUntilIdle()``, for at most `timeout` seconds of wall time: `false` if the manager was
    /// still busy then (the wait itself goes on in the background, and ends when it is idle).
    func waitUntilIdle(timeout: TimeInterval) async -> Bool {
        let outcome = ConcurrencySafeContainer<CheckedContinuation<Bool, Never>?>(nil)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            outcome.withLock { $0 = continuation }
            Task { [weak self] in
                await self?.waitUntilIdle()
                outcome.withLock { $0.take() }?.resume(returning: true)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) {
                outcome.withLock { $0.take() }?.resume(returning: false)
            }
        }
    }
}
