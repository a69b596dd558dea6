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

    /// The platform's "did become active" notification: `UIApplication.didBecomeActiveNotification`
    /// where UIKit exists, `NSApplication.didBecomeActiveNotification` where AppKit does, and
    /// ``authSessionApplicationDidBecomeActive`` elsewhere.
    ///
    /// The UIKit and AppKit names are spelled as their string values, which is what those
    /// constants hold: reading the constants themselves from a nonisolated context is an error in
    /// the Swift 6 language mode with some SDKs, because their classes are main-actor isolated.
    public static var authSessionPlatformDidBecomeActive: Notification.Name {
        #if canImport(UIKit)
        Notification.Name("UIApplicationDidBecomeActiveNotification")
        #elseif canImport(AppKit)
        Notification.Name("NSApplicationDidBecomeActiveNotification")
        #else
        authSessionApplicationDidBecomeActive
        #endif
    }
}

/// An ``AppActivationSignal`` fed by a `NotificationCenter` notification.
///
/// By default it listens to `Notification.Name.authSessionPlatformDidBecomeActive`
/// on `NotificationCenter.default`: UIKit's and AppKit's own notification on Apple platforms; on
/// Linux the client posts `Notification.Name.authSessionApplicationDidBecomeActive`
/// itself when it returns to the foreground, and the launch counts as the first activation.
///
/// All operations are thread-safe. The handler runs on the posting thread.
public struct NotificationCenterActivationSignal: AppActivationSignal {

    /// The center observed.
    public let center: NotificationCenter

    /// The notification observed.
    public let name: Notification.Name

    /// Whether an app lifecycle posts `name`, the launch included: `true` where UIKit or AppKit
    /// exists, `false` elsewhere. See ``AppActivationSignal/hasApplicationLifecycle``.
    public let hasApplicationLifecycle: Bool

    /// Creates a signal for `name` on `center`.
    ///
    /// - Parameters:
    ///   - center: The notification center; `.default` unless you isolate a test.
    ///   - name: The notification that means "the app became active".
    ///   - hasApplicationLifecycle: Whether an app lifecycle posts it, the launch included; by
    ///     default `true` where UIKit or AppKit exists and `false` elsewhere.
    public init(
        center: NotificationCenter = .default,
        name: Notification.Name = .authSessionPlatformDidBecomeActive,
        hasApplicationLifecycle: Bool = Self.platformHasApplicationLifecycle
    ) {
        self.center = center
        self.name = name
        self.hasApplicationLifecycle = hasApplicationLifecycle
    }

    /// Whether this platform has an app lifecycle that posts activations: UIKit or AppKit.
    public static var platformHasApplicationLifecycle: Bool {
        #if canImport(UIKit) || canImport(AppKit)
        true
        #else
        false
        #endif
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
