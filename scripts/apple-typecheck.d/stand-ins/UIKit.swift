// A stand-in for Apple's UIKit, so that the package's `#if canImport(UIKit)` branches are
// type-checked on Linux (scripts/apple-typecheck). The package spells the notification names as
// their strings (see `ApplicationLifecycle`); it calls the background-task methods
// (`UIKitBackgroundTaskAssertion`), and Examples/SwiftUIApp finds the key window of the scene in
// the foreground. Everything is declared as Apple's documentation shows it, isolation and
// availability included.

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
    // https://developer.apple.com/documentation/uikit/uiapplication/connectedscenes:
    // `var connectedScenes: Set<UIScene> { get }` (iOS 13, Mac Catalyst 13.1), main-actor isolated
    // with its class.
    @available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
    public var connectedScenes: Set<UIScene> { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/uikit/uiscene: `@MainActor class UIScene : UIResponder`
// (iOS 13, Mac Catalyst 13.1); the responder chain in between is left out.
@available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@MainActor
open class UIScene: NSObject {
    // https://developer.apple.com/documentation/uikit/uiscene/activationstate-swift.property:
    // `var activationState: UIScene.ActivationState { get }`
    open var activationState: UIScene.ActivationState { fatalError("stand-in") }

    // https://developer.apple.com/documentation/uikit/uiscene/activationstate-swift.enum:
    // `enum ActivationState`, the header's `typedef NS_ENUM(NSInteger, UISceneActivationState)`:
    // unattached -1, foregroundActive 0, foregroundInactive 1, background 2; Equatable, Hashable,
    // RawRepresentable, Sendable.
    public enum ActivationState: Int, Sendable {
        case unattached = -1
        case foregroundActive = 0
        case foregroundInactive = 1
        case background = 2
    }
}

// https://developer.apple.com/documentation/uikit/uiwindowscene: `@MainActor class UIWindowScene :
// UIScene` (iOS 13, Mac Catalyst 13.1).
@available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@MainActor
open class UIWindowScene: UIScene {
    // https://developer.apple.com/documentation/uikit/uiwindowscene/keywindow:
    // `var keyWindow: UIWindow? { get }` (iOS 15, Mac Catalyst 15)
    @available(iOS 15.0, macCatalyst 15.0, tvOS 15.0, visionOS 1.0, *)
    open var keyWindow: UIWindow? { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/uikit/uibackgroundtaskidentifier: a struct wrapping an
// `Int`, with `static let invalid`.
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

// https://developer.apple.com/documentation/uikit/uiwindow: `@MainActor class UIWindow : UIView`
// (a UIResponder, an NSObject). The view hierarchy in between is left out: only
// Examples/SwiftUIApp's presentation anchor uses it.
@MainActor
open class UIWindow: NSObject {
    // https://developer.apple.com/documentation/uikit/uiwindow/init(): `convenience init()`,
    // iOS 2.0 to 26.0 (deprecated in iOS 26, Mac Catalyst 26, tvOS 26, visionOS 26); a window made
    // so belongs to no scene.
    @available(iOS, introduced: 2.0, deprecated: 26.0)
    @available(macCatalyst, introduced: 13.1, deprecated: 26.0)
    @available(tvOS, introduced: 9.0, deprecated: 26.0)
    @available(visionOS, introduced: 1.0, deprecated: 26.0)
    public override init() {}

    // https://developer.apple.com/documentation/uikit/uiwindow/init(windowscene:):
    // `init(windowScene: UIWindowScene)` (iOS 13, Mac Catalyst 13.1): a window of that scene.
    @available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
    public init(windowScene: UIWindowScene) {}
}
