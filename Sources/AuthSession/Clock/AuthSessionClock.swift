import Foundation

/// Tells the current date, and sleeps until a date; the handle asks it for every expiry
/// decision, and the session manager schedules refreshes and retry back-offs on it.
///
/// Inject a clock you control (`ManualClock` in `AuthSessionMocks`) to test expiry edges and
/// back-offs without waiting in real time.
///
/// Conformers must be thread-safe.
public protocol AuthSessionClock: Sendable {

    /// The current date.
    var now: Date { get }

    /// Suspends the calling task until the clock shows `deadline` or later.
    ///
    /// Returns at once when `deadline` is not in the future. A clock that moves only when told
    /// (a test clock) resumes its sleepers as it moves past their deadlines.
    ///
    /// The default implementation sleeps in real time for the interval between ``now`` and
    /// `deadline`, as measured when it starts.
    ///
    /// - Parameter deadline: The date to sleep until.
    /// - Throws: `CancellationError` if the task is cancelled first.
    func sleep(until deadline: Date) async throws

    /// Seconds that only ever go forward, whatever is done to ``now`` (a clock set back, set
    /// forward): how the session manager measures how long it has seen another process's refresh
    /// lease, independently of the wall clock.
    ///
    /// The default implementation is the system's uptime (`ProcessInfo.systemUptime`).
    var uptime: TimeInterval { get }
}

extension AuthSessionClock {

    /// The system's uptime: `ProcessInfo.processInfo.systemUptime`.
    public var uptime: TimeInterval { ProcessInfo.processInfo.systemUptime }

    /// Sleeps in real time for the interval between ``now`` and `deadline`.
    ///
    /// - Parameter deadline: The date to sleep until.
    /// - Throws: `CancellationError` if the task is cancelled first.
    public func sleep(until deadline: Date) async throws {
        try Task.checkCancellation()
        let nanoseconds = SystemTimers.nanoseconds(fromSeconds: deadline.timeIntervalSince(now))
        guard nanoseconds > 0 else { return }
        // Not `Task.sleep`: a cancelled one keeps its timer until the deadline on Linux.
        try await CancellableSleep.sleep(nanoseconds: nanoseconds)
    }

    /// Suspends the calling task for `interval` seconds of this clock's time.
    ///
    /// - Parameter interval: Seconds to sleep; zero or less returns at once.
    /// - Throws: `CancellationError` if the task is cancelled first.
    public func sleep(for interval: TimeInterval) async throws {
        try await sleep(until: now.addingTimeInterval(interval))
    }
}

/// The system's wall clock: `Date()`.
///
/// All operations are thread-safe.
public struct SystemClock: AuthSessionClock {

    /// Creates the system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }
}
