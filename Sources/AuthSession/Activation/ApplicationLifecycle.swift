import Foundation

#if canImport(Darwin)
import Darwin
#endif

/// Who tells this process that it became active: UIKit, AppKit, or nobody (the client posts the
/// package's own notification).
///
/// Decided from what the platform offers and from the bundle the process runs from, so that a
/// macOS command-line tool (where AppKit exists but no `NSApplication` runs), a helper tool inside
/// an app's bundle (whose main bundle is the enclosing app) and an app extension (where
/// `UIApplication` posts nothing) get the behaviour of a process without a lifecycle instead of
/// waiting for a notification that never comes. The decision is a pure function, tested on every
/// platform.
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
    ///   - isBundleExecutable: Whether this process runs the main bundle's executable. A helper
    ///     tool inside an app (`Foo.app/Contents/MacOS/helper`, `Foo.app/Contents/Helpers/tool`)
    ///     has the enclosing app for its main bundle, `app` and `APPL` included, but no
    ///     `NSApplication` (or `UIApplication`) runs in it.
    static func decide(
        hasUIKit: Bool,
        hasAppKit: Bool,
        bundleExtension: String,
        bundlePackageType: String?,
        isBundleExecutable: Bool
    ) -> Self {
        let isExtension = bundleExtension == "appex" || bundlePackageType == "XPC!"
        let isApplication =
            !isExtension && isBundleExecutable && (bundleExtension == "app" || bundlePackageType == "APPL")
        guard isApplication else { return .none }
        if hasUIKit { return .uiKit }
        if hasAppKit { return .appKit }
        return .none
    }

    /// Whether `processExecutable`, this process's executable, is `bundleExecutable`, the main
    /// bundle's: the same path once symbolic links, `.` and `..` are resolved, or the same file
    /// (device and file number; a case-insensitive volume can spell one path two ways).
    ///
    /// Either unknown is taken for "the same", the decision before helpers were told apart: a
    /// folder without an executable is no app anyway, and an app always knows its own path.
    ///
    /// - Parameters:
    ///   - bundleExecutable: `Bundle.main.executableURL`.
    ///   - processExecutable: The path this process was started from (`_NSGetExecutablePath` on
    ///     Apple platforms), which may be a symbolic link.
    static func isBundleExecutable(bundleExecutable: URL?, processExecutable: URL?) -> Bool {
        guard let bundleExecutable, let processExecutable else { return true }
        let bundlePath = bundleExecutable.resolvingSymlinksInPath().standardizedFileURL.path
        let processPath = processExecutable.resolvingSymlinksInPath().standardizedFileURL.path
        if bundlePath == processPath { return true }
        let files = FileManager.default
        guard let bundleFile = try? files.attributesOfItem(atPath: bundlePath),
            let processFile = try? files.attributesOfItem(atPath: processPath),
            let bundleNumber = bundleFile[.systemFileNumber] as? NSNumber,
            let processNumber = processFile[.systemFileNumber] as? NSNumber,
            let bundleDevice = bundleFile[.systemNumber] as? NSNumber,
            let processDevice = processFile[.systemNumber] as? NSNumber
        else { return false }
        return bundleNumber == processNumber && bundleDevice == processDevice
    }

    /// The path this process's executable was started from, as `dyld` gives it on Apple platforms
    /// (it may be a symbolic link); `nil` elsewhere, where no lifecycle is decided from it.
    static var processExecutableURL: URL? {
        #if canImport(Darwin)
        // dyld(3): with a buffer too small, -1 and the size needed in `size`.
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var buffer = [CChar](repeating: 0, count: Int(size) + 1)
        size = UInt32(buffer.count)
        guard _NSGetExecutablePath(&buffer, &size) == 0 else { return nil }
        let path = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return URL(fileURLWithPath: path, isDirectory: false)
        #else
        nil
        #endif
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
            bundlePackageType: Bundle.main.object(forInfoDictionaryKey: "CFBundlePackageType") as? String,
            isBundleExecutable: isBundleExecutable(
                bundleExecutable: Bundle.main.executableURL,
                processExecutable: processExecutableURL
            )
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
