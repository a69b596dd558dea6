import AuthSession
import Foundation

/// Asks the operating system for time to finish work the app started before it left the
/// foreground: on iOS, `UIApplication.beginBackgroundTask(withName:expirationHandler:)`
/// (`UIKitBackgroundTaskAssertion`). The session manager holds one around each refresh, so a
/// refresh started in the foreground can write its rotated tokens before the app is suspended.
///
/// Nothing the manager holds depends on it: no lock is held across the network, and a process
/// suspended mid-refresh keeps the others waiting no longer than its ``RefreshLease``.
public protocol BackgroundTaskAssertion: Sendable {

    /// Asks for time to finish `name`.
    ///
    /// - Parameters:
    ///   - name: What the work is, for the system's diagnostics.
    ///   - expired: Called if the system's time runs out first; the assertion ends by itself then.
    /// - Returns: What ends the assertion; call its ``BackgroundTaskToken/end()`` when the work is
    ///   done.
    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken
}

/// The end of one ``BackgroundTaskAssertion``: ``end()`` runs its ending once, whoever calls first
/// (the work, or the system's expiry).
public final class BackgroundTaskToken: Sendable {

    private let ending: ConcurrencySafeContainer<(@Sendable () -> Void)?>

    /// Creates a token whose ``end()`` runs `end` once.
    ///
    /// - Parameter end: What ends the assertion.
    public init(end: @escaping @Sendable () -> Void) {
        ending = ConcurrencySafeContainer(end)
    }

    /// Ends the assertion; a second call does nothing.
    public func end() {
        let end = ending.withLock { stored -> (@Sendable () -> Void)? in
            defer { stored = nil }
            return stored
        }
        end?()
    }
}

#if canImport(UIKit) && !os(watchOS)
import UIKit

/// The iOS background task around a refresh: `beginBackgroundTask(withName:expirationHandler:)`
/// and `endBackgroundTask(_:)`, which UIKit declares `nonisolated` and safe to call from any
/// thread, so ``begin(_:expired:)`` takes the assertion before the refresh goes out. The expiry
/// handler, which UIKit calls on the main thread, ends the task itself, synchronously, as UIKit
/// requires. Create it on the main thread (it keeps `UIApplication.shared`), in the app: app
/// extensions have no `UIApplication.shared`, and this type is unavailable there (an extension
/// uses ``ExpiringActivityAssertion``).
@available(iOSApplicationExtension, unavailable, message: "use ExpiringActivityAssertion")
@available(macCatalystApplicationExtension, unavailable, message: "use ExpiringActivityAssertion")
public struct UIKitBackgroundTaskAssertion: BackgroundTaskAssertion {

    private let application: UIApplication

    /// Creates the assertion for the app's `UIApplication.shared`.
    @MainActor
    public init() {
        application = UIApplication.shared
    }

    /// Begins a background task.
    ///
    /// - Parameters:
    ///   - name: The task's name.
    ///   - expired: Called if the time runs out, after the task has ended.
    /// - Returns: The token that ends the task.
    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        let application = application
        // Set before the expiry handler can run: UIKit calls it on the main thread, later.
        let identifier = ConcurrencySafeContainer<UIBackgroundTaskIdentifier?>(nil)
        let end: @Sendable () -> Void = {
            let task = identifier.withLock { stored -> UIBackgroundTaskIdentifier? in
                defer { stored = .invalid }
                return stored
            }
            if let task, task != .invalid {
                application.endBackgroundTask(task)
            }
        }
        let task = application.beginBackgroundTask(withName: name) {
            end()
            expired()
        }
        identifier.withLock { stored in
            // Ended by the expiry handler already (a task begun in the last moments): nothing to keep.
            if stored == nil { stored = task }
        }
        if identifier.withLock({ $0 }) != task, task != .invalid {
            application.endBackgroundTask(task)
        }
        return BackgroundTaskToken(end: end)
    }
}
#endif

/// Time to finish work, for any process, an app extension included:
/// `ProcessInfo.performExpiringActivity(withReason:using:)` on Apple platforms.
///
/// App extensions have no `UIApplication` and so no background task; a widget or a share
/// extension that refreshes the shared session asks for time this way. Apps may use it too. The
/// system runs the activity's block on a thread of its own: the assertion holds that thread until
/// ``BackgroundTaskToken/end()`` (the pattern Apple's documentation describes: the work is "done"
/// when the block returns). When the system needs the process to stop, it calls the block again,
/// with `expired` true: the assertion then calls the begin call's `expired` handler and lets the
/// first block return, so that the process can be suspended. If no time is granted at all, the
/// handler runs at once.
///
/// Elsewhere (Linux) a process is not suspended behind its back: the assertion does nothing.
///
/// All operations are thread-safe.
public struct ExpiringActivityAssertion: BackgroundTaskAssertion {

    /// Performs an expiring activity: calls `block` with `false` when time is granted, and with
    /// `true` when it runs out (or at once, when none is granted).
    public typealias Performer =
        @Sendable (_ reason: String, _ block: @escaping @Sendable (_ expired: Bool) -> Void) -> Void

    private let performer: Performer?

    /// Creates the assertion for this process: `ProcessInfo.processInfo`'s expiring activities on
    /// Apple platforms, nothing elsewhere.
    public init() {
        #if canImport(Darwin)
        performer = { reason, block in
            ProcessInfo.processInfo.performExpiringActivity(withReason: reason, using: block)
        }
        #else
        performer = nil
        #endif
    }

    /// Creates the assertion over another performer: the seam tests use to play the system.
    ///
    /// - Parameter performer: What performs the activity, as
    ///   `ProcessInfo.performExpiringActivity(withReason:using:)` does.
    public init(performer: @escaping Performer) {
        self.performer = performer
    }

    /// Asks for time to finish `name`.
    ///
    /// - Parameters:
    ///   - name: What the work is (the activity's reason, for the system's diagnostics).
    ///   - expired: Called once if the time runs out before ``BackgroundTaskToken/end()``.
    /// - Returns: The token that ends the activity.
    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        guard let performer else { return BackgroundTaskToken {} }
        let activity = ExpiringActivity(expired: expired)
        performer(name) { isExpired in
            if isExpired {
                activity.expire()
            } else {
                activity.holdUntilEnded()
            }
        }
        return BackgroundTaskToken { activity.end() }
    }
}

/// One expiring activity: the granted block waits here until the work ends or the time runs out.
private final class ExpiringActivity: Sendable {

    private enum Phase {
        case running
        case ended
        case expired
    }

    private let phase = ConcurrencySafeContainer(Phase.running)
    private let released = DispatchSemaphore(value: 0)
    private let expired: @Sendable () -> Void

    init(expired: @escaping @Sendable () -> Void) {
        self.expired = expired
    }

    /// The granted block: returns when the work ends or the time runs out.
    func holdUntilEnded() {
        guard phase.withLock({ $0 == .running }) else { return }
        released.wait()
    }

    /// The work is done: the granted block returns.
    func end() {
        let wasRunning = phase.withLock { phase -> Bool in
            defer { if phase == .running { phase = .ended } }
            return phase == .running
        }
        if wasRunning { released.signal() }
    }

    /// The time ran out (or none was granted): the work is told, and the granted block returns.
    func expire() {
        let wasRunning = phase.withLock { phase -> Bool in
            defer { if phase == .running { phase = .expired } }
            return phase == .running
        }
        guard wasRunning else { return }
        expired()
        released.signal()
    }
}
