import Foundation

extension Notification.Name {

    /// The notification a client posts when it becomes active, on platforms without UIKit or
    /// AppKit (Linux, for example).
    ///
    /// ```swift
    /// NotificationCenter.default.post(name: .authSessionApplicationDidBecomeActive, object: nil)
    /// ```
    public static let authSessionApplicationDidBecomeActive = Notification.Name(
        "AuthSessionApplicationDidBecomeActiveNotification"
    )

    /// This process's "did become active" notification: `UIApplication.didBecomeActiveNotification`
    /// in an app where UIKit exists, `NSApplication.didBecomeActiveNotification` in an app where
    /// AppKit does, and ``authSessionApplicationDidBecomeActive`` everywhere else: on Linux, in a
    /// macOS command-line tool (AppKit exists there, but no `NSApplication` runs to post anything),
    /// and in an app extension (where `UIApplication` posts nothing).
    ///
    /// Whether the process is an app is read from its main bundle (an `.app` folder, or a
    /// `CFBundlePackageType` of `APPL`). The UIKit and AppKit names are spelled as the strings their
    /// constants hold: AppKit's constant is isolated to the main actor, and this is read from any
    /// thread.
    public static var authSessionPlatformDidBecomeActive: Notification.Name {
        ApplicationLifecycle.current.didBecomeActiveNotification
    }
}

/// An ``AppActivationSignal`` fed by a `NotificationCenter` notification.
///
/// By default it listens to `Notification.Name.authSessionPlatformDidBecomeActive`
/// on `NotificationCenter.default`: UIKit's or AppKit's own notification in an app on Apple
/// platforms. On Linux, in a macOS command-line tool and in an app extension, the client posts
/// `Notification.Name.authSessionApplicationDidBecomeActive` itself when it returns to the
/// foreground, and the launch counts as the first activation.
///
/// All operations are thread-safe. The handler runs on the posting thread.
public struct NotificationCenterActivationSignal: AppActivationSignal {

    /// The center observed.
    public let center: NotificationCenter

    /// The notification observed.
    public let name: Notification.Name

    /// Whether an app lifecycle posts `name`, the launch included: `true` in an app where UIKit
    /// or AppKit exists, `false` elsewhere. See ``AppActivationSignal/hasApplicationLifecycle``.
    public let hasApplicationLifecycle: Bool

    /// Creates a signal for `name` on `center`.
    ///
    /// - Parameters:
    ///   - center: The notification center; `.default` unless you isolate a test.
    ///   - name: The notification that means "the app became active".
    ///   - hasApplicationLifecycle: Whether an app lifecycle posts it, the launch included; by
    ///     default ``platformHasApplicationLifecycle``.
    public init(
        center: NotificationCenter = .default,
        name: Notification.Name = .authSessionPlatformDidBecomeActive,
        hasApplicationLifecycle: Bool = Self.platformHasApplicationLifecycle
    ) {
        self.center = center
        self.name = name
        self.hasApplicationLifecycle = hasApplicationLifecycle
    }

    /// Whether this process has an app lifecycle that posts activations: `true` in an app where
    /// UIKit or AppKit exists; `false` on Linux, in a macOS command-line tool and in an app
    /// extension, where the launch counts as the first activation.
    public static var platformHasApplicationLifecycle: Bool {
        ApplicationLifecycle.current.postsActivations
    }

    /// Adds an observer that calls `handler`; cancelling the observation removes it.
    ///
    /// - Parameter handler: Called once per posted notification.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> AppActivationObservation {
        let token = ObserverToken(center.addObserver(forName: name, object: nil, queue: nil) { _ in handler() })
        let center = center
        return AppActivationObservation { center.removeObserver(token.value) }
    }
}

/// A `NotificationCenter` observer token.
// @unchecked: the token is opaque and only handed back to `NotificationCenter.removeObserver(_:)`,
// which may be called from any thread.
private struct ObserverToken: @unchecked Sendable {
    let value: any NSObjectProtocol

    init(_ value: any NSObjectProtocol) {
        self.value = value
    }
}
