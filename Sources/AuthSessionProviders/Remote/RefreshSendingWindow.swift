import AuthSession
import Foundation

/// The time in which a request made for the refresh in flight may still leave this process: until
/// a little before its refresh lease lapses, on the wall clock and on this process's monotonic
/// uptime alike.
///
/// Another process takes over a lapsed lease and presents the same refresh token; if this one's
/// request left too (a process stopped inside its exchange, then resumed), a server with reuse
/// detection revokes the whole family. So the session manager checks the window before each
/// attempt, and the package's transport checks it again immediately before a request is handed
/// to the network: a request that finds it closed is not sent, and fails as timed out.
package struct RefreshSendingWindow: Sendable {

    /// The window of the refresh this task is making, if it is making one.
    @TaskLocal package static var current: RefreshSendingWindow?

    private let clock: any AuthSessionClock
    private let closesAt: Date
    private let closesAtUptime: TimeInterval

    /// A window that closes at `closesAt` on `clock`'s wall clock or at `closesAtUptime` on its
    /// uptime, whichever comes first.
    package init(clock: any AuthSessionClock, closesAt: Date, closesAtUptime: TimeInterval) {
        self.clock = clock
        self.closesAt = closesAt
        self.closesAtUptime = closesAtUptime
    }

    /// Whether a request may still be sent.
    package var isOpen: Bool {
        clock.now < closesAt && clock.uptime < closesAtUptime
    }
}
