import AuthSession
import Foundation

extension ManagedSessionProvider {

    /// A refresh for the app's background task (`BGAppRefreshTask` on iOS): the token is
    /// refreshed while the app is in the background, so that it is fresh when the person opens
    /// the app, and a widget that reads the shared store shows a live session.
    ///
    /// ```swift
    /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.session", using: nil) { task in
    ///     let refresh = provider.backgroundRefresh()
    ///     task.expirationHandler = { refresh.expire() }
    ///     Task {
    ///         let result = await refresh.run()
    ///         if let next = result.nextRefreshDate {
    ///             let request = BGAppRefreshTaskRequest(identifier: "com.example.app.session")
    ///             request.earliestBeginDate = next
    ///             try? BGTaskScheduler.shared.submit(request)
    ///         }
    ///         task.setTaskCompleted(success: result.isSuccess)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter horizon: How far ahead to look: the session is refreshed now if its token
    ///   would be due for a refresh within this many seconds (the system may not run the next
    ///   background task sooner). 15 minutes by default; at most half the token's lifetime, as
    ///   ``validAccessToken(minimumValidity:)`` caps its validity.
    /// - Returns: The refresh, to run once.
    public func backgroundRefresh(horizon: TimeInterval = 15 * 60) -> BackgroundRefresh {
        BackgroundRefresh(provider: self, horizon: max(0, horizon))
    }
}

/// One background refresh of a ``ManagedSessionProvider``: ``run()`` refreshes if the session is
/// due within the horizon, and says when to schedule the next; ``expire()``, from the task's
/// expiration handler, ends it at once.
///
/// When the system's time runs out, ``run()`` returns ``BackgroundRefreshResult/Outcome/expired``
/// at once, so the app can complete its task before it is suspended. Work it began takes the
/// store's exclusive access no more (a process suspended while holding a file lock in a shared
/// container is killed): a refresh whose token has not left is not sent, and its lease is given
/// back at once (in an exclusive access taken only if it is free, never waited for); a refresh
/// whose token may have left keeps its lease until it lapses (giving it back could let another
/// process present the same, possibly spent, refresh token), and rotated tokens that arrive are
/// kept in memory and written at the next activation.
///
/// All operations are thread-safe.
public final class BackgroundRefresh: Sendable {

    private let provider: ManagedSessionProvider
    private let horizon: TimeInterval
    private let time = BackgroundTime()
    private let expiry = OneShotGate()

    init(provider: ManagedSessionProvider, horizon: TimeInterval) {
        self.provider = provider
        self.horizon = horizon
    }

    /// Refreshes if the session's token is due within the horizon (waiting for the launch to
    /// finish first), unless ``expire()`` ends it first.
    ///
    /// - Returns: What happened, and when to schedule the next background refresh.
    public func run() async -> BackgroundRefreshResult {
        provider.beginBackgroundRefresh(time)
        defer { provider.endBackgroundRefresh(time) }
        let before = provider.session
        let horizon = horizon
        let provider = provider
        let time = time
        let outcome = await withTaskGroup(of: BackgroundRefreshResult.Outcome?.self) { group in
            group.addTask {
                do throws(ManagedSessionError) {
                    let session = try await provider.validSession(minimumValidity: horizon)
                    let rotated = session.accessToken != before?.accessToken
                    return rotated ? .refreshed : .notDue
                } catch .notSignedIn {
                    return .notSignedIn
                } catch {
                    return .failed(error)
                }
            }
            group.addTask { [expiry] in
                await expiry.wait() ? .expired : nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // A refresh that failed because the time ran out (nothing sent) ended by the expiry.
            if case .failed = first, time.hasExpired { return BackgroundRefreshResult.Outcome.expired }
            return first ?? .expired
        }
        return BackgroundRefreshResult(
            outcome: outcome,
            nextRefreshDate: nextDate(after: outcome, now: provider.clock.now)
        )
    }

    /// The system's time ran out (call it from the task's expiration handler): ``run()`` returns
    /// ``BackgroundRefreshResult/Outcome/expired`` at once, and the work it began stops taking the
    /// store's access.
    public func expire() {
        time.expire()
        provider.giveBackUnsentLeases()
        expiry.open()
    }

    /// When to ask for the next background refresh: the token's refresh time less the horizon
    /// (at least a horizon from now), a horizon from now after a failure, none without a session.
    private func nextDate(after outcome: BackgroundRefreshResult.Outcome, now: Date) -> Date? {
        let soonest = now.addingTimeInterval(max(horizon, 60))
        switch outcome {
        case .notSignedIn, .failed(.readOnly):
            return nil
        case .failed(let error) where error.endsSession:
            return nil
        case .refreshed, .notDue, .failed, .expired:
            guard let due = provider.nextRefreshDate else {
                return provider.session == nil ? nil : soonest
            }
            return max(soonest, due.addingTimeInterval(-horizon))
        }
    }
}

/// What a ``BackgroundRefresh`` did, and when to schedule the next.
///
/// All operations are thread-safe.
public struct BackgroundRefreshResult: Sendable, Hashable {

    /// What the background refresh did.
    ///
    /// All operations are thread-safe.
    public enum Outcome: Sendable, Hashable {

        /// The session was refreshed (by this process, or another's rotation it adopted).
        case refreshed

        /// The token stays valid beyond the horizon: nothing was sent.
        case notDue

        /// Nobody is signed in.
        case notSignedIn

        /// The refresh failed; ``ManagedSessionError/endsSession`` says whether the session is
        /// over (a transient failure keeps it, and the next activation retries).
        case failed(ManagedSessionError)

        /// The system's time ran out first.
        case expired
    }

    /// What happened.
    public let outcome: Outcome

    /// When to schedule the next background refresh (`BGAppRefreshTaskRequest.earliestBeginDate`),
    /// or `nil` when there is nothing to refresh (nobody signed in, the session over, or a
    /// process that only reads the session).
    public let nextRefreshDate: Date?

    /// Whether the task succeeded, for `BGTask.setTaskCompleted(success:)`: `false` only when
    /// the refresh failed or the time ran out.
    public var isSuccess: Bool {
        switch outcome {
        case .refreshed, .notDue, .notSignedIn: true
        case .failed, .expired: false
        }
    }
}

/// A gate opened at most once, that any number of tasks wait for; a cancelled waiter leaves.
private final class OneShotGate: Sendable {

    private struct State {
        var isOpen = false
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = ConcurrencySafeContainer(State())

    /// Opens the gate: every wait returns `true`.
    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Waits until the gate opens (`true`), or the calling task is cancelled (`false`).
    func wait() async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool? in
                    if state.isOpen { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: false)
        }
    }
}

#if canImport(BackgroundTasks)
import BackgroundTasks

extension ManagedSessionProvider {

    /// Performs a ``BackgroundRefresh`` in the app's refresh task, and asks for the next one:
    /// what an app calls from the launch handler it registers with `BGTaskScheduler`.
    ///
    /// ```swift
    /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.session", using: nil) { task in
    ///     guard let task = task as? BGAppRefreshTask else { return task.setTaskCompleted(success: false) }
    ///     provider.performBackgroundRefresh(in: task)
    /// }
    /// ```
    ///
    /// It sets the task's expiration handler (``BackgroundRefresh/expire()``), runs the refresh,
    /// submits a `BGAppRefreshTaskRequest` with the task's identifier for
    /// ``BackgroundRefreshResult/nextRefreshDate`` (none when there is nothing to refresh), and
    /// completes the task with ``BackgroundRefreshResult/isSuccess``. The app lists the identifier
    /// under `BGTaskSchedulerPermittedIdentifiers` in its Info.plist and submits the first request
    /// itself.
    ///
    /// - Parameters:
    ///   - task: The task the system launched the app for.
    ///   - horizon: How far ahead to look (see ``backgroundRefresh(horizon:)``).
    @available(iOSApplicationExtension, unavailable, message: "background tasks belong to the app")
    @available(macCatalystApplicationExtension, unavailable, message: "background tasks belong to the app")
    public func performBackgroundRefresh(in task: BGAppRefreshTask, horizon: TimeInterval = 15 * 60) {
        let refresh = backgroundRefresh(horizon: horizon)
        task.expirationHandler = { refresh.expire() }
        let completion = BackgroundTaskCompletion(task)
        Task {
            let result = await refresh.run()
            completion.complete(with: result)
        }
    }
}

/// The app's refresh task, carried to where the refresh ends.
// @unchecked: the task is touched once, to complete it (and read its identifier) after the
// refresh; Apple's own sample completes a BGTask from an operation's completion block, on
// whatever thread that runs.
@available(iOSApplicationExtension, unavailable)
@available(macCatalystApplicationExtension, unavailable)
private final class BackgroundTaskCompletion: @unchecked Sendable {

    private let task: BGAppRefreshTask

    init(_ task: BGAppRefreshTask) {
        self.task = task
    }

    /// Asks for the next refresh, then completes the task.
    func complete(with result: BackgroundRefreshResult) {
        if let next = result.nextRefreshDate {
            let request = BGAppRefreshTaskRequest(identifier: task.identifier)
            request.earliestBeginDate = next
            // Refused in the simulator and when the app lacks the identifier: nothing more to do.
            try? BGTaskScheduler.shared.submit(request)
        }
        task.setTaskCompleted(success: result.isSuccess)
    }
}
#endif
