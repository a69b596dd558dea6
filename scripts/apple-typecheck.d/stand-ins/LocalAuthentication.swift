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
// https://developer.apple.com/documentation/localauthentication/lapolicy (enum, Int, Sendable);
// the Watch policies are deprecated type properties sharing the Companion cases' raw values.

public enum LAPolicy: Int, Sendable {
    case deviceOwnerAuthenticationWithBiometrics = 1
    case deviceOwnerAuthentication = 2
    case deviceOwnerAuthenticationWithCompanion = 3
    case deviceOwnerAuthenticationWithBiometricsOrCompanion = 4
    case deviceOwnerAuthenticationWithWristDetection = 5
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
// https://developer.apple.com/documentation/localauthentication/labiometrytype

public enum LABiometryType: Int, Sendable {
    case none = 0
    case touchID = 1
    case faceID = 2
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
        case companionNotAvailable = -11
        case biometryNotPaired = -12
        case biometryDisconnected = -13
        case invalidDimensions = -14
        case notInteractive = -1004

        public static var biometryNotAvailable: Code { Code(rawValue: -6)! }
        public static var biometryNotEnrolled: Code { Code(rawValue: -7)! }
        public static var biometryLockout: Code { Code(rawValue: -8)! }
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }

    public static var errorDomain: String { LAErrorDomain }
}
