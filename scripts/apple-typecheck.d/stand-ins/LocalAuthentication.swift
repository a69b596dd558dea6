// A stand-in for the part of Apple's LocalAuthentication framework this package uses, with the
// Swift declarations and Sendable annotations of Apple's current documentation, so that the
// package's `#if canImport(LocalAuthentication)` code is type-checked on Linux
// (scripts/apple-typecheck). Bodies never run: only the types matter.

import Foundation
import Security

/// Foundation's `NSErrorPointer` (`AutoreleasingUnsafeMutablePointer<NSError?>?` on Apple
/// platforms), which Foundation on Linux lacks; `&error` of an `NSError?` converts to either.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

// MARK: LAContext
// https://developer.apple.com/documentation/localauthentication/lacontext: `class LAContext`, an
// NSObject; its conformances list no Sendable, and Apple documents no thread-safety for it.

open class LAContext: NSObject {

    public override init() {}

    // https://developer.apple.com/documentation/localauthentication/lacontext/canevaluatepolicy(_:error:)
    open func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool { fatalError("stand-in") }

    // https://developer.apple.com/documentation/localauthentication/lacontext/evaluatepolicy(_:localizedreason:reply:)
    open func evaluatePolicy(
        _ policy: LAPolicy,
        localizedReason: String,
        reply: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) { fatalError("stand-in") }

    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        fatalError("stand-in")
    }

    // https://developer.apple.com/documentation/localauthentication/lacontext/evaluateaccesscontrol(_:operation:localizedreason:reply:)
    open func evaluateAccessControl(
        _ accessControl: SecAccessControl,
        operation: LAAccessControlOperation,
        localizedReason: String,
        reply: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) { fatalError("stand-in") }

    open func evaluateAccessControl(
        _ accessControl: SecAccessControl,
        operation: LAAccessControlOperation,
        localizedReason: String
    ) async throws -> Bool { fatalError("stand-in") }

    // https://developer.apple.com/documentation/localauthentication/lacontext/invalidate()
    open func invalidate() { fatalError("stand-in") }

    // https://developer.apple.com/documentation/localauthentication/lacontext/localizedfallbacktitle
    open var localizedFallbackTitle: String?
    // https://developer.apple.com/documentation/localauthentication/lacontext/localizedcanceltitle
    open var localizedCancelTitle: String?
    // https://developer.apple.com/documentation/localauthentication/lacontext/localizedreason
    open var localizedReason: String = ""
    // https://developer.apple.com/documentation/localauthentication/lacontext/interactionnotallowed
    open var interactionNotAllowed: Bool = false
    // https://developer.apple.com/documentation/localauthentication/lacontext/biometrytype
    open var biometryType: LABiometryType { fatalError("stand-in") }
}

// MARK: LAPolicy
// https://developer.apple.com/documentation/localauthentication/lapolicy (enum, Int, Sendable),
// each case's availability from its page and LAContext.h:
// https://developer.apple.com/documentation/localauthentication/lapolicy/deviceownerauthenticationwithbiometrics
// https://developer.apple.com/documentation/localauthentication/lapolicy/deviceownerauthentication
// https://developer.apple.com/documentation/localauthentication/lapolicy/deviceownerauthenticationwithcompanion
//   (iOS 18, Mac Catalyst 18, macOS 15)
// https://developer.apple.com/documentation/localauthentication/lapolicy/deviceownerauthenticationwithbiometricsorcompanion
//   (iOS 18, Mac Catalyst 18, macOS 15)
// https://developer.apple.com/documentation/localauthentication/lapolicy/deviceownerauthenticationwithwristdetection
//   (watchOS 9 only)
// https://developer.apple.com/documentation/localauthentication/lapolicy/deviceownerauthenticationwithwatch and
// https://developer.apple.com/documentation/localauthentication/lapolicy/deviceownerauthenticationwithbiometricsorwatch:
//   macOS 10.15, deprecated in macOS 15 for the Companion names, which share their raw values, so
//   they are type properties. Their pages also list iOS, which LAContext.h contradicts:
//   `API_AVAILABLE(macos(10.15), macCatalyst(13.0)) API_UNAVAILABLE(ios, watchos, tvos)`; the
//   header is what the compiler reads.

public enum LAPolicy: Int, Sendable {
    case deviceOwnerAuthenticationWithBiometrics = 1
    case deviceOwnerAuthentication = 2
    @available(iOS 18.0, macOS 15.0, macCatalyst 18.0, *)
    case deviceOwnerAuthenticationWithCompanion = 3
    @available(iOS 18.0, macOS 15.0, macCatalyst 18.0, *)
    case deviceOwnerAuthenticationWithBiometricsOrCompanion = 4
    @available(iOS, unavailable)
    @available(macOS, unavailable)
    @available(macCatalyst, unavailable)
    case deviceOwnerAuthenticationWithWristDetection = 5

    @available(iOS, unavailable)
    @available(macCatalyst, introduced: 13.0)
    @available(macOS, introduced: 10.15, deprecated: 15.0, renamed: "deviceOwnerAuthenticationWithCompanion")
    public static var deviceOwnerAuthenticationWithWatch: LAPolicy { LAPolicy(rawValue: 3)! }

    @available(iOS, unavailable)
    @available(macCatalyst, introduced: 13.0)
    @available(macOS, introduced: 10.15, deprecated: 15.0, renamed: "deviceOwnerAuthenticationWithBiometricsOrCompanion")
    public static var deviceOwnerAuthenticationWithBiometricsOrWatch: LAPolicy { LAPolicy(rawValue: 4)! }
}

// MARK: LAAccessControlOperation
// https://developer.apple.com/documentation/localauthentication/laaccesscontroloperation

public enum LAAccessControlOperation: Int, Sendable {
    case createItem = 0
    case useItem = 1
    case createKey = 2
    case useKeySign = 3
    case useKeyDecrypt = 4
    case useKeyKeyExchange = 5
}

// MARK: LABiometryType
// https://developer.apple.com/documentation/localauthentication/labiometrytype (iOS 11,
// macOS 10.13.2); https://developer.apple.com/documentation/localauthentication/labiometrytype/opticid
// (iOS 17, Mac Catalyst 17, macOS 14)

public enum LABiometryType: Int, Sendable {
    case none = 0
    case touchID = 1
    case faceID = 2
    @available(iOS 17.0, macOS 14.0, macCatalyst 17.0, *)
    case opticID = 4
}

// MARK: LAError
// https://developer.apple.com/documentation/localauthentication/laerror-swift.struct (struct
// LAError: CustomNSError, Hashable, Error, Sendable) and
// https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/code (enum
// Code: Int). The deprecated Touch ID cases come first in the C enum, so they are the cases and
// the biometry names are type properties with the same raw values: a `switch` over a code needs a
// `default`.

public let LAErrorDomain: String = "com.apple.LocalAuthentication"

public struct LAError: Error, Hashable, Sendable {

    // Each case's availability from its page and LAError.h. The macOS-only codes are
    // `API_AVAILABLE(macos(...)) API_UNAVAILABLE(ios, watchos, tvos)` in the header (Mac Catalyst
    // follows iOS):
    // https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/code/biometrynotpaired (macOS 11.2)
    // https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/code/biometrydisconnected (macOS 11.2)
    // https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/code/invaliddimensions (macOS 12)
    // https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/code/watchnotavailable
    //   (macOS 10.15, deprecated in macOS 15 for companionNotAvailable, which shares its raw value)
    // https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/companionnotavailable
    //   (iOS 18, Mac Catalyst 18, macOS 15)
    // https://developer.apple.com/documentation/localauthentication/laerror-swift.struct/code/biometrynotavailable
    //   (iOS 11, macOS 10.13, as are biometryNotEnrolled and biometryLockout)
    public enum Code: Int, Sendable {
        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        @available(*, deprecated, message: "use biometryNotAvailable")
        case touchIDNotAvailable = -6
        @available(*, deprecated, message: "use biometryNotEnrolled")
        case touchIDNotEnrolled = -7
        @available(*, deprecated, message: "use biometryLockout")
        case touchIDLockout = -8
        case appCancel = -9
        case invalidContext = -10
        @available(iOS 18.0, macOS 15.0, macCatalyst 18.0, *)
        case companionNotAvailable = -11
        @available(iOS, unavailable)
        @available(macCatalyst, unavailable)
        @available(macOS 11.2, *)
        case biometryNotPaired = -12
        @available(iOS, unavailable)
        @available(macCatalyst, unavailable)
        @available(macOS 11.2, *)
        case biometryDisconnected = -13
        @available(iOS, unavailable)
        @available(macCatalyst, unavailable)
        @available(macOS 12.0, *)
        case invalidDimensions = -14
        case notInteractive = -1004

        @available(iOS 11.0, macOS 10.13, *)
        public static var biometryNotAvailable: Code { Code(rawValue: -6)! }
        @available(iOS 11.0, macOS 10.13, *)
        public static var biometryNotEnrolled: Code { Code(rawValue: -7)! }
        @available(iOS 11.0, macOS 10.13, *)
        public static var biometryLockout: Code { Code(rawValue: -8)! }

        @available(iOS, unavailable)
        @available(macCatalyst, unavailable)
        @available(macOS, introduced: 10.15, deprecated: 15.0, renamed: "companionNotAvailable")
        public static var watchNotAvailable: Code { Code(rawValue: -11)! }
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }

    public static var errorDomain: String { LAErrorDomain }
}
