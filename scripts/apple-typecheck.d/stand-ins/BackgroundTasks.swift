// A stand-in for Apple's BackgroundTasks, so that the package's `#if canImport(BackgroundTasks)`
// branch is type-checked on Linux (scripts/apple-typecheck, iOS build only: macOS has no
// BackgroundTasks). Declared as Apple's documentation shows it: Objective-C classes, not
// `Sendable`, on iOS 13, Mac Catalyst 13.1, tvOS 13 and visionOS 1.
// https://developer.apple.com/documentation/backgroundtasks

import Foundation

// https://developer.apple.com/documentation/backgroundtasks/bgtask: `class BGTask`, with
// `var identifier: String { get }`, `var expirationHandler: (() -> Void)? { get set }` and
// `func setTaskCompleted(success: Bool)`.
@available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@available(macOS, unavailable)
open class BGTask: NSObject {
    open var identifier: String { fatalError("stand-in") }
    open var expirationHandler: (() -> Void)?
    open func setTaskCompleted(success: Bool) { fatalError("stand-in") }
}

// https://developer.apple.com/documentation/backgroundtasks/bgapprefreshtask: `class BGAppRefreshTask : BGTask`.
@available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@available(macOS, unavailable)
open class BGAppRefreshTask: BGTask {}

// https://developer.apple.com/documentation/backgroundtasks/bgtaskrequest: `class BGTaskRequest`,
// with `var identifier: String { get }` and `var earliestBeginDate: Date? { get set }`.
@available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@available(macOS, unavailable)
open class BGTaskRequest: NSObject {
    open var identifier: String { fatalError("stand-in") }
    open var earliestBeginDate: Date?
}

// https://developer.apple.com/documentation/backgroundtasks/bgapprefreshtaskrequest:
// `class BGAppRefreshTaskRequest : BGTaskRequest`, `init(identifier: String)`.
@available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@available(macOS, unavailable)
open class BGAppRefreshTaskRequest: BGTaskRequest {
    public init(identifier: String) {}
}

// https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler: `class BGTaskScheduler`,
// with `class var shared: BGTaskScheduler { get }`,
// `func register(forTaskWithIdentifier identifier: String, using queue: dispatch_queue_t?, launchHandler: @escaping (BGTask) -> Void) -> Bool`
// and `func submit(_ taskRequest: BGTaskRequest) throws`.
@available(iOS 13.0, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, *)
@available(macOS, unavailable)
open class BGTaskScheduler: NSObject {
    open class var shared: BGTaskScheduler { fatalError("stand-in") }
    open func register(
        forTaskWithIdentifier identifier: String,
        using queue: DispatchQueue?,
        launchHandler: @escaping (BGTask) -> Void
    ) -> Bool { fatalError("stand-in") }
    open func submit(_ taskRequest: BGTaskRequest) throws { fatalError("stand-in") }
}
