// A stand-in for Apple's UIKit, so that the package's `#if canImport(UIKit)` branches are
// type-checked on Linux (scripts/apple-typecheck). The package reads no UIKit symbol: it spells
// the notification names as their strings (see `ApplicationLifecycle`). What it would use is
// declared as Apple's documentation shows it, isolation included.

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
}
