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
/// and `endBackgroundTask(_:)`, called on the main thread (`UIApplication.shared` is main-actor
/// isolated), so ``begin(_:expired:)`` returns at once from any thread. The expiry handler ends the
/// task itself, synchronously, as UIKit requires. Not for app extensions, which have no
/// `UIApplication.shared`.
public struct UIKitBackgroundTaskAssertion: BackgroundTaskAssertion {

    /// Creates the assertion.
    public init() {}

    /// Begins a background task on the main thread.
    ///
    /// - Parameters:
    ///   - name: The task's name.
    ///   - expired: Called if the time runs out.
    /// - Returns: The token that ends the task.
    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken {
        let identifier = ConcurrencySafeContainer<UIBackgroundTaskIdentifier?>(nil)
        let isEnded = ConcurrencySafeContainer(false)
        let end: @Sendable () -> Void = {
            let wasEnded = isEnded.withLock { ended in
                defer { ended = true }
                return ended
            }
            guard !wasEnded else { return }
            DispatchQueue.main.async {
                guard let task = identifier.withLock({ $0 }), task != .invalid else { return }
                UIApplication.shared.endBackgroundTask(task)
            }
        }
        let token = BackgroundTaskToken(end: end)
        DispatchQueue.main.async {
            // Ended before the main thread got here: nothing to begin.
            guard !isEnded.withLock({ $0 }) else { return }
            let task = UIApplication.shared.beginBackgroundTask(withName: name) {
                // On the main thread, shortly before the time runs out: the task must end before
                // this handler returns, or the system ends the app.
                isEnded.withLock { $0 = true }
                if let task = identifier.withLock({ $0 }), task != .invalid {
                    UIApplication.shared.endBackgroundTask(task)
                }
                expired()
            }
            identifier.withLock { $0 = task }
        }
        return token
    }
}
#endif
