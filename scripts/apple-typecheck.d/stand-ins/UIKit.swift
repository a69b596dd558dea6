// A stand-in for Apple's UIKit, so that the package's `#if canImport(UIKit)` branches are
// type-checked on Linux (scripts/apple-typecheck). The package spells the notification names as
// their strings (see `ApplicationLifecycle`); it calls the background-task methods
// (`UIKitBackgroundTaskAssertion`). Everything is declared as Apple's documentation shows it,
// isolation included.

import Foundation

// https://developer.apple.com/documentation/uikit/uiapplication: `@MainActor class UIApplication`;
// the notification names and `isProtectedDataAvailable` are `nonisolated` (NS_SWIFT_NONISOLATED in
// the iOS 18.2 SDK header).

@MainActor
open class UIApplication: NSObject {
    // https://developer.apple.com/documentation/uikit/uiapplication/didbecomeactivenotification
    nonisolated public static let didBecomeActiveNotification = NSNotification.Name(
        "UIApplicationDidBecomeActiveNotification"
    )
    // https://developer.apple.com/documentation/uikit/uiapplication/protecteddatadidbecomeavailablenotification
    nonisolated public static let protectedDataDidBecomeAvailableNotification = NSNotification.Name(
        "UIApplicationProtectedDataDidBecomeAvailable"
    )
    // https://developer.apple.com/documentation/uikit/uiapplication/isprotecteddataavailable
    nonisolated public var isProtectedDataAvailable: Bool { fatalError("stand-in") }

    // https://developer.apple.com/documentation/uikit/uiapplication/shared:
    // `class var shared: UIApplication { get }`, main-actor isolated with its class, and unavailable
    // in app extensions (UIApplication.h: `NS_EXTENSION_UNAVAILABLE_IOS("Use view controller based
    // solutions where appropriate instead.")`).
    @available(iOSApplicationExtension, unavailable, message: "Use view controller based solutions where appropriate instead.")
    @available(macCatalystApplicationExtension, unavailable, message: "Use view controller based solutions where appropriate instead.")
    public class var shared: UIApplication { fatalError("stand-in") }
    // https://developer.apple.com/documentation/uikit/uiapplication/applicationstate:
    // `var applicationState: UIApplication.State { get }`, main-actor isolated with its class.
    public var applicationState: UIApplication.State { fatalError("stand-in") }

    // https://developer.apple.com/documentation/uikit/uiapplication/state: `enum State: Int`,
    // `case active = 0, inactive = 1, background = 2`.
    public enum State: Int, Sendable {
        case active = 0
        case inactive = 1
        case background = 2
    }

    // https://developer.apple.com/documentation/objectivec/nsobject-swift.class/value(forkey:):
    // `func value(forKey key: String) -> Any?`, NSObject's key-value coding. The importer offers a
    // root class's instance methods as class methods too (an Objective-C class object is an
    // instance of its root class), so `UIApplication.value(forKey:)` asks the class object; Linux's
    // NSObject has no key-value coding, so the stand-in declares the class method itself.
    nonisolated open class func value(forKey key: String) -> Any? { fatalError("stand-in") }

    // https://developer.apple.com/documentation/uikit/uiapplication/beginbackgroundtask(withname:expirationhandler:):
    // `nonisolated func beginBackgroundTask(withName taskName: String?, expirationHandler handler:
    // (@MainActor @Sendable () -> Void)? = nil) -> UIBackgroundTaskIdentifier`
    nonisolated public func beginBackgroundTask(
        withName taskName: String?,
        expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier { fatalError("stand-in") }
    // https://developer.apple.com/documentation/uikit/uiapplication/endbackgroundtask(_:):
    // `nonisolated func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)`
    nonisolated public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/uikit/uibackgroundtaskidentifier: a struct wrapping an
// `Int`, with `static let invalid`.
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

// https://developer.apple.com/documentation/uikit/uiwindow: `@MainActor class UIWindow : UIView`
// (a UIResponder, an NSObject); `UIWindow()` makes one. The view hierarchy in between is left out:
// only Examples/SwiftUIApp's presentation anchor uses it.
@MainActor
open class UIWindow: NSObject {
    public override init() {}
}
