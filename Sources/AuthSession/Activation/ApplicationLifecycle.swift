import Foundation

/// Who tells this process that it became active: UIKit, AppKit, or nobody (the client posts the
/// package's own notification).
///
/// Decided from what the platform offers and from the bundle the process runs from, so that a
/// macOS command-line tool (where AppKit exists but no `NSApplication` runs) and an app extension
/// (where `UIApplication` posts nothing) get the behaviour of a process without a lifecycle instead
/// of waiting for a notification that never comes. The decision is a pure function, tested on
/// every platform.
enum ApplicationLifecycle: Hashable, Sendable {

    /// `UIApplication` posts `didBecomeActiveNotification`, at launch too.
    case uiKit

    /// `NSApplication` posts `didBecomeActiveNotification`, at launch too.
    case appKit

    /// Nothing posts an activation: the launch counts as the first one, and the client posts
    /// `Notification.Name.authSessionApplicationDidBecomeActive` when it returns to the foreground.
    case none

    /// The decision.
    ///
    /// - Parameters:
    ///   - hasUIKit: Whether UIKit exists (iOS, iPadOS, tvOS, visionOS, Mac Catalyst).
    ///   - hasAppKit: Whether AppKit exists (macOS; Mac Catalyst too, where UIKit wins).
    ///   - bundleExtension: The path extension of the main bundle's folder: `app` for an app,
    ///     `appex` for an app extension, anything else (the folder holding a command-line tool's
    ///     executable) otherwise.
    ///   - bundlePackageType: The main bundle's `CFBundlePackageType`, if it has one: `APPL` for an
    ///     app, `XPC!` for an app extension.
    static func decide(
        hasUIKit: Bool,
        hasAppKit: Bool,
        bundleExtension: String,
        bundlePackageType: String?
    ) -> Self {
        let isExtension = bundleExtension == "appex" || bundlePackageType == "XPC!"
        let isApplication = !isExtension && (bundleExtension == "app" || bundlePackageType == "APPL")
        guard isApplication else { return .none }
        if hasUIKit { return .uiKit }
        if hasAppKit { return .appKit }
        return .none
    }

    /// This process's lifecycle.
    static let current: Self = {
        #if canImport(UIKit)
        let hasUIKit = true
        #else
        let hasUIKit = false
        #endif
        #if canImport(AppKit)
        let hasAppKit = true
        #else
        let hasAppKit = false
        #endif
        return decide(
            hasUIKit: hasUIKit,
            hasAppKit: hasAppKit,
            bundleExtension: Bundle.main.bundleURL.pathExtension,
            bundlePackageType: Bundle.main.object(forInfoDictionaryKey: "CFBundlePackageType") as? String
        )
    }()

    /// The notification that means "became active" for this lifecycle. The UIKit and AppKit names
    /// are spelled as the strings their constants hold: AppKit's constant is isolated to the main
    /// actor, and this is read from any thread.
    var didBecomeActiveNotification: Notification.Name {
        switch self {
        case .uiKit: Notification.Name("UIApplicationDidBecomeActiveNotification")
        case .appKit: Notification.Name("NSApplicationDidBecomeActiveNotification")
        case .none: .authSessionApplicationDidBecomeActive
        }
    }

    /// Whether activations come from the lifecycle, the launch's included.
    var postsActivations: Bool { self != .none }
}
