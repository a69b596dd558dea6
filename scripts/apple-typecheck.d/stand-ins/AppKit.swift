// A stand-in for Apple's AppKit, so that the package's `#if canImport(AppKit)` branches are
// type-checked on Linux (scripts/apple-typecheck). The package reads no AppKit symbol: it spells
// the notification name as its string (see `ApplicationLifecycle`), because AppKit's constant is
// isolated to the main actor, as declared here. Examples/SwiftUIApp reads the key window.

import Foundation

// https://developer.apple.com/documentation/appkit/nsapplication: `NSApplication` inherits
// NSResponder's main-actor isolation; `didBecomeActiveNotification` is not marked `nonisolated`
// (https://developer.apple.com/documentation/appkit/nsapplication/didbecomeactivenotification).

@MainActor
open class NSApplication: NSObject {
    public static let didBecomeActiveNotification = NSNotification.Name("NSApplicationDidBecomeActiveNotification")

    // https://developer.apple.com/documentation/appkit/nsapplication/shared:
    // `class var shared: NSApplication { get }` (macOS 10.0), main-actor isolated with its class.
    open class var shared: NSApplication { fatalError("stand-in") }

    // https://developer.apple.com/documentation/appkit/nsapplication/keywindow:
    // `var keyWindow: NSWindow? { get }` (macOS 10.0): the window that receives keyboard events.
    open var keyWindow: NSWindow? { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/appkit/nswindow: `@MainActor class NSWindow : NSResponder`
// (an NSObject); `NSWindow()` makes one. Only Examples/SwiftUIApp's presentation anchor uses it,
// when the app has no key window.
@MainActor
open class NSWindow: NSObject {
    public override init() {}
}
