// A stand-in for the part of Apple's Security framework this package uses, with the Swift
// declarations Apple's documentation shows, so that the package's `#if canImport(Security)` code is
// type-checked on Linux (scripts/apple-typecheck). Bodies never run: only the types matter.
//
// Core Foundation, which Security re-exports on Apple platforms, does not exist for Swift on
// Linux. Its types are spelled here as the Foundation classes they are toll-free bridged to, so
// that `[String: Any] as CFDictionary` and `kSecClass as String` type-check exactly where they do
// on Apple platforms, and a missing `as CFDictionary` fails as it does there. (An `NSDictionary`
// passed where a `CFDictionary` is expected is accepted here and refused by Apple's compiler.)

import Foundation

// MARK: Core Foundation
// https://developer.apple.com/documentation/corefoundation/cfstring (class CFString)
// https://developer.apple.com/documentation/corefoundation/cfdictionary (class CFDictionary)
// https://developer.apple.com/documentation/corefoundation/cftyperef (typealias CFTypeRef = AnyObject)

public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFData = NSData
public typealias CFError = NSError
public typealias CFTypeRef = AnyObject
public typealias CFOptionFlags = UInt
public final class CFAllocator {}

// MARK: OSStatus and the result codes
// OSStatus is MacTypes' `SInt32`. The result codes are members of an anonymous
// `CF_ENUM(OSStatus)` and import as get-only globals:
// https://developer.apple.com/documentation/security/security-framework-result-codes
// (for example https://developer.apple.com/documentation/security/errsecitemnotfound shows
// `var errSecItemNotFound: OSStatus { get }`).

public typealias OSStatus = Int32

public var errSecSuccess: OSStatus { 0 }
public var errSecParam: OSStatus { -50 }
public var errSecUserCanceled: OSStatus { -128 }
public var errSecNotAvailable: OSStatus { -25_291 }
public var errSecAuthFailed: OSStatus { -25_293 }
public var errSecDuplicateItem: OSStatus { -25_299 }
public var errSecItemNotFound: OSStatus { -25_300 }
public var errSecInteractionNotAllowed: OSStatus { -25_308 }
public var errSecMissingEntitlement: OSStatus { -34_018 }

// MARK: Keychain item functions
// https://developer.apple.com/documentation/security/secitemadd(_:_:)
// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:)
// https://developer.apple.com/documentation/security/secitemupdate(_:_:)
// https://developer.apple.com/documentation/security/secitemdelete(_:)

public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("stand-in")
}

public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("stand-in")
}

public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    fatalError("stand-in")
}

public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    fatalError("stand-in")
}

// MARK: Access control
// https://developer.apple.com/documentation/security/secaccesscontrol (class SecAccessControl:
// Equatable, Hashable; not Sendable)
// https://developer.apple.com/documentation/security/secaccesscontrolcreateflags (struct, OptionSet,
// Sendable; members are `static var … { get }`)
// https://developer.apple.com/documentation/security/secaccesscontrolcreatewithflags(_:_:_:_:)

public final class SecAccessControl: Hashable {
    public static func == (lhs: SecAccessControl, rhs: SecAccessControl) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: CFOptionFlags
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }
    public static var userPresence: SecAccessControlCreateFlags { .init(rawValue: 1 << 0) }
    public static var biometryAny: SecAccessControlCreateFlags { .init(rawValue: 1 << 1) }
    public static var biometryCurrentSet: SecAccessControlCreateFlags { .init(rawValue: 1 << 3) }
    public static var devicePasscode: SecAccessControlCreateFlags { .init(rawValue: 1 << 4) }
    public static var or: SecAccessControlCreateFlags { .init(rawValue: 1 << 14) }
    public static var and: SecAccessControlCreateFlags { .init(rawValue: 1 << 15) }
}

public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?,
    _ protection: CFTypeRef,
    _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    fatalError("stand-in")
}

// MARK: Keys and values
// Each is `let kSec…: CFString`, as in
// https://developer.apple.com/documentation/security/item-class-keys-and-values,
// https://developer.apple.com/documentation/security/item-attribute-keys-and-values,
// https://developer.apple.com/documentation/security/search-attribute-keys-and-values,
// https://developer.apple.com/documentation/security/item-return-result-keys and
// https://developer.apple.com/documentation/security/ksecusedataprotectionkeychain. The values
// here are placeholders.

public let kSecClass: CFString = "class"
public let kSecClassGenericPassword: CFString = "genp"
public let kSecAttrService: CFString = "svce"
public let kSecAttrAccount: CFString = "acct"
public let kSecAttrAccessGroup: CFString = "agrp"
public let kSecAttrGeneric: CFString = "gena"
public let kSecAttrAccessible: CFString = "pdmn"
public let kSecAttrAccessControl: CFString = "accc"
public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
public let kSecValueData: CFString = "v_Data"
public let kSecReturnData: CFString = "r_Data"
public let kSecReturnAttributes: CFString = "r_Attributes"
public let kSecMatchLimit: CFString = "m_Limit"
public let kSecMatchLimitOne: CFString = "m_LimitOne"
public let kSecUseDataProtectionKeychain: CFString = "nleg"
public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
