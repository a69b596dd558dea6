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
/// extensions have no `UIApplication.shared`.
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
