// A stand-in for the part of Apple's AuthenticationServices framework this package uses, with the
// Swift declarations and Sendable annotations of Apple's current documentation, so that the
// package's `#if canImport(AuthenticationServices)` code is type-checked on Linux
// (scripts/apple-typecheck). Bodies never run: only the types matter.

import Foundation

// MARK: ASAuthorizationAppleIDProvider
// https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidprovider:
// `class ASAuthorizationAppleIDProvider`, an NSObject, not main-actor isolated. Its conformances
// list Sendable, which the SDK's Swift overlay declares from iOS 16.4, macOS 13.3, tvOS 16.4,
// watchOS 9.4 only (see "Not Sendable at the deployment targets" further down).

open class ASAuthorizationAppleIDProvider: NSObject {

    public override init() {}

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidprovider/createrequest()
    open func createRequest() -> ASAuthorizationAppleIDRequest { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidprovider/getcredentialstate(foruserid:completion:)
    open func getCredentialState(
        forUserID userID: String,
        completion: @escaping @Sendable (ASAuthorizationAppleIDProvider.CredentialState, (any Error)?) -> Void
    ) { fatalError("stand-in") }

    open func credentialState(forUserID userID: String) async throws -> ASAuthorizationAppleIDProvider.CredentialState {
        fatalError("stand-in")
    }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidprovider/credentialrevokednotification
    // (`class let credentialRevokedNotification: NSNotification.Name`; a Swift class cannot declare a
    // stored `class let`, and `static let` reads the same at the call site.)
    public static let credentialRevokedNotification = NSNotification.Name(
        "ASAuthorizationAppleIDProviderCredentialRevokedNotification"
    )

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidprovider/credentialstate
    public enum CredentialState: Int, Sendable {
        case revoked = 0
        case authorized = 1
        case notFound = 2
        case transferred = 3
    }
}

// MARK: Not Sendable at the deployment targets
// The Objective-C headers of the classes below mark none of them Sendable; the SDK's Swift overlay
// does from iOS 16.4, as in AuthenticationServices.swiftinterface of the iOS 18.0 SDK:
//     @available(iOS 16.4, macOS 13.3, tvOS 16.4, watchOS 9.4, *)
//     extension AuthenticationServices.ASAuthorizationAppleIDCredential : @unchecked Swift.Sendable {}
// (and the same for ASAuthorization, ASAuthorizationAppleIDProvider, ASAuthorizationRequest,
// ASAuthorizationOpenIDRequest and ASAuthorizationAppleIDRequest); each class's page lists Sendable
// among its conformances. This package's deployment targets are iOS 14 and macOS 10.15, where
// none of them is Sendable, and Apple's compiler refuses to send one across isolation there
// ("conformance of '…' to 'Sendable' is only available in iOS 16.4 or newer"). On Linux the
// compiler ignores iOS and macOS availability: declared here, the conformances would hold
// everywhere, and such code would pass. So the stand-ins declare the classes as the deployment
// targets see them, without the conformances: code that sends a credential across isolation
// fails this check (scripts/apple-typecheck --planted-mistakes plants one), as it fails on iOS 14.

// MARK: ASAuthorization
// https://developer.apple.com/documentation/authenticationservices/asauthorization:
// `class ASAuthorization`, an NSObject (iOS 13, macOS 10.15), not main-actor isolated, Sendable
// from iOS 16.4 only (above). The header marks `init` and `new` NS_UNAVAILABLE: only the controller
// makes one.

open class ASAuthorization: NSObject {

    @available(*, unavailable)
    public override init() { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorization/credential
    // (`var credential: any ASAuthorizationCredential { get }`)
    open var credential: any ASAuthorizationCredential { fatalError("stand-in") }
}


extension ASAuthorization {

    // https://developer.apple.com/documentation/authenticationservices/asauthorization/scope:
    // `struct Scope`: Equatable, Hashable, RawRepresentable, Sendable. The header's
    // `typedef NSString * ASAuthorizationScope NS_SWIFT_NAME(ASAuthorization.Scope)
    // NS_TYPED_EXTENSIBLE_ENUM`, so a struct over a String with both initializers, and its
    // constants ASAuthorizationScopeFullName and ASAuthorizationScopeEmail as type properties.
    public struct Scope: Hashable, RawRepresentable, Sendable {

        // https://developer.apple.com/documentation/authenticationservices/asauthorization/scope/init(_:)
        public init(_ rawValue: String) { self.rawValue = rawValue }

        // https://developer.apple.com/documentation/authenticationservices/asauthorization/scope/init(rawvalue:)
        public init(rawValue: String) { self.rawValue = rawValue }

        public let rawValue: String

        // https://developer.apple.com/documentation/authenticationservices/asauthorization/scope/fullname
        // (`static let fullName: ASAuthorization.Scope`; the string, "full_name", is not documented)
        public static let fullName = Scope(rawValue: "full_name")

        // https://developer.apple.com/documentation/authenticationservices/asauthorization/scope/email
        // (`static let email: ASAuthorization.Scope`; the string, "email", is not documented)
        public static let email = Scope(rawValue: "email")
    }
}

// MARK: ASAuthorizationCredential
// https://developer.apple.com/documentation/authenticationservices/asauthorizationcredential:
// `protocol ASAuthorizationCredential : NSCopying, NSSecureCoding, NSObjectProtocol` (iOS 13,
// macOS 10.15), with no requirements of its own; not Sendable (the conforming classes are, from
// iOS 16.4, each by its own conformance).

public protocol ASAuthorizationCredential: NSCopying, NSSecureCoding, NSObjectProtocol {}

// MARK: ASAuthorizationAppleIDCredential
// https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential:
// `class ASAuthorizationAppleIDCredential`, an NSObject conforming to ASAuthorizationCredential
// (iOS 13, macOS 10.15), not main-actor isolated, Sendable from iOS 16.4 only (see "Not Sendable
// at the deployment targets"). Its properties are read-only; the header marks `init` and `new`
// NS_UNAVAILABLE, so only the system makes one (or `init?(coder:)` decodes one).

open class ASAuthorizationAppleIDCredential: NSObject, ASAuthorizationCredential {

    @available(*, unavailable)
    public override init() { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/init(coder:)
    public required init?(coder: NSCoder) { fatalError("stand-in") }

    // NSSecureCoding and NSCopying, as every credential (`class var supportsSecureCoding: Bool`,
    // `func encode(with coder: NSCoder)`, `func copy(with zone: NSZone? = nil) -> Any`).
    public class var supportsSecureCoding: Bool { fatalError("stand-in") }
    open func encode(with coder: NSCoder) { fatalError("stand-in") }
    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/user
    open var user: String { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/state
    open var state: String? { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/authorizedscopes
    open var authorizedScopes: [ASAuthorization.Scope] { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/authorizationcode
    // (UTF-8 bytes of the code)
    open var authorizationCode: Data? { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/identitytoken
    // (UTF-8 bytes of the JWT)
    open var identityToken: Data? { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/email
    open var email: String? { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/fullname
    open var fullName: PersonNameComponents? { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/realuserstatus
    open var realUserStatus: ASUserDetectionStatus { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidcredential/useragerange
    @available(iOS 17.0, macOS 14.0, macCatalyst 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    open var userAgeRange: ASUserAgeRange { fatalError("stand-in") }
}


// https://developer.apple.com/documentation/authenticationservices/asuserdetectionstatus:
// `enum ASUserDetectionStatus`, the header's `typedef NS_ENUM(NSInteger, ASUserDetectionStatus)
// { ASUserDetectionStatusUnsupported, ASUserDetectionStatusUnknown, ASUserDetectionStatusLikelyReal }`,
// so `Int` raw values 0, 1, 2 (init?(rawValue: Int)); Equatable, Hashable, RawRepresentable,
// Sendable. The header gives it no availability of its own. Apple's import is a non-frozen C
// enum: a `switch` over it without `@unknown default` warns there, and not here.
public enum ASUserDetectionStatus: Int, Sendable {
    // https://developer.apple.com/documentation/authenticationservices/asuserdetectionstatus/unsupported
    case unsupported = 0
    // https://developer.apple.com/documentation/authenticationservices/asuserdetectionstatus/unknown
    case unknown = 1
    // https://developer.apple.com/documentation/authenticationservices/asuserdetectionstatus/likelyreal
    case likelyReal = 2
}

// https://developer.apple.com/documentation/authenticationservices/asuseragerange:
// `enum ASUserAgeRange` (iOS 17, macOS 14), NS_ENUM(NSInteger): unknown 0, child 1, notChild 2;
// Equatable, Hashable, RawRepresentable, Sendable; non-frozen, as above.
@available(iOS 17.0, macOS 14.0, macCatalyst 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
public enum ASUserAgeRange: Int, Sendable {
    // https://developer.apple.com/documentation/authenticationservices/asuseragerange/unknown
    case unknown = 0
    // https://developer.apple.com/documentation/authenticationservices/asuseragerange/child
    case child = 1
    // https://developer.apple.com/documentation/authenticationservices/asuseragerange/notchild
    case notChild = 2
}

// MARK: ASAuthorizationRequest, ASAuthorizationOpenIDRequest, ASAuthorizationAppleIDRequest
// https://developer.apple.com/documentation/authenticationservices/asauthorizationrequest:
// `class ASAuthorizationRequest`, an NSObject, NSCopying, NSSecureCoding (iOS 13, macOS 10.15),
// not main-actor isolated, Sendable from iOS 16.4 only; `init` and `new` are NS_UNAVAILABLE, so a
// request comes from its provider (`createRequest()`).

open class ASAuthorizationRequest: NSObject, NSCopying, NSSecureCoding {

    @available(*, unavailable)
    public override init() { fatalError("stand-in") }

    public required init?(coder: NSCoder) { fatalError("stand-in") }
    public class var supportsSecureCoding: Bool { fatalError("stand-in") }
    open func encode(with coder: NSCoder) { fatalError("stand-in") }
    open func copy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}


// https://developer.apple.com/documentation/authenticationservices/asauthorizationopenidrequest:
// `class ASAuthorizationOpenIDRequest`, an ASAuthorizationRequest, Sendable from iOS 16.4 only. Its
// `requestedOperation: ASAuthorization.OpenIDOperation` is not declared here.

open class ASAuthorizationOpenIDRequest: ASAuthorizationRequest {

    // The base class's NS_UNAVAILABLE `init` holds for it too; `init?(coder:)` is inherited.
    @available(*, unavailable)
    public override init() { fatalError("stand-in") }

    public required init?(coder: NSCoder) { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationopenidrequest/requestedscopes
    open var requestedScopes: [ASAuthorization.Scope]? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationopenidrequest/state
    open var state: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationopenidrequest/nonce
    open var nonce: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}


// https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidrequest:
// `class ASAuthorizationAppleIDRequest`, an ASAuthorizationOpenIDRequest, Sendable from iOS 16.4 only.

open class ASAuthorizationAppleIDRequest: ASAuthorizationOpenIDRequest {

    // The base class's NS_UNAVAILABLE `init` holds for it too; `init?(coder:)` is inherited.
    @available(*, unavailable)
    public override init() { fatalError("stand-in") }

    public required init?(coder: NSCoder) { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidrequest/user
    open var user: String? {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}


// MARK: ASAuthorizationError
// https://developer.apple.com/documentation/authenticationservices/asauthorizationerrordomain
// (`let ASAuthorizationErrorDomain: String`), and
// https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct
// (`struct ASAuthorizationError`, an Error) with
// https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code
// (`enum Code`, init?(rawValue: Int); Equatable, Hashable, RawRepresentable, Sendable): the
// header's `typedef NS_ERROR_ENUM(ASAuthorizationErrorDomain, ASAuthorizationError)`, whose raw
// values are explicit (1000 to 1010). Each code is also a type property of the struct
// (`static var canceled: ASAuthorizationError.Code { get }`, ...). Non-frozen, as above.

public let ASAuthorizationErrorDomain: String = "com.apple.AuthenticationServices.AuthorizationError"

public struct ASAuthorizationError: Error, Hashable, Sendable {

    public enum Code: Int, Sendable {
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/unknown
        case unknown = 1000
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/canceled
        case canceled = 1001
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/invalidresponse
        case invalidResponse = 1002
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/nothandled
        case notHandled = 1003
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/failed
        case failed = 1004
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/notinteractive
        @available(iOS 15.0, macOS 12.0, macCatalyst 15.0, visionOS 1.0, *)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        case notInteractive = 1005
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/matchedexcludedcredential
        @available(iOS 18.0, macOS 15.0, macCatalyst 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        case matchedExcludedCredential = 1006
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/credentialimport
        @available(iOS 18.2, macOS 15.2, macCatalyst 18.2, visionOS 2.2, *)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        case credentialImport = 1007
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/credentialexport
        @available(iOS 18.2, macOS 15.2, macCatalyst 18.2, visionOS 2.2, *)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        case credentialExport = 1008
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/prefersigninwithapple
        @available(iOS 26.0, macOS 26.0, macCatalyst 26.0, visionOS 26.0, *)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        case preferSignInWithApple = 1009
        // https://developer.apple.com/documentation/authenticationservices/asauthorizationerror-swift.struct/code/devicenotconfiguredforpasskeycreation
        @available(iOS 26.0, macOS 26.0, macCatalyst 26.0, visionOS 26.0, *)
        @available(tvOS, unavailable)
        @available(watchOS, unavailable)
        case deviceNotConfiguredForPasskeyCreation = 1010
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }

    public static var errorDomain: String { ASAuthorizationErrorDomain }

    public static var unknown: Code { .unknown }
    public static var canceled: Code { .canceled }
    public static var invalidResponse: Code { .invalidResponse }
    public static var notHandled: Code { .notHandled }
    public static var failed: Code { .failed }
    @available(iOS 15.0, macOS 12.0, macCatalyst 15.0, visionOS 1.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public static var notInteractive: Code { .notInteractive }
    @available(iOS 18.0, macOS 15.0, macCatalyst 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public static var matchedExcludedCredential: Code { .matchedExcludedCredential }
    @available(iOS 18.2, macOS 15.2, macCatalyst 18.2, visionOS 2.2, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public static var credentialImport: Code { .credentialImport }
    @available(iOS 18.2, macOS 15.2, macCatalyst 18.2, visionOS 2.2, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public static var credentialExport: Code { .credentialExport }
    @available(iOS 26.0, macOS 26.0, macCatalyst 26.0, visionOS 26.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public static var preferSignInWithApple: Code { .preferSignInWithApple }
    @available(iOS 26.0, macOS 26.0, macCatalyst 26.0, visionOS 26.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public static var deviceNotConfiguredForPasskeyCreation: Code { .deviceNotConfiguredForPasskeyCreation }
}

// MARK: ASWebAuthenticationSession
// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession:
// `class ASWebAuthenticationSession`, an NSObject, neither main-actor isolated nor Sendable
// (iOS 12, macOS 10.15).

open class ASWebAuthenticationSession: NSObject {

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/completionhandler
    public typealias CompletionHandler = (URL?, (any Error)?) -> Void

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/init(url:callbackurlscheme:completionhandler:)-7fpox
    // (iOS 12, macOS 10.15; marked to be deprecated in a future release, API_TO_BE_DEPRECATED,
    // which warns at no deployment target.)
    public init(url URL: URL, callbackURLScheme: String?, completionHandler: @escaping CompletionHandler) {
        fatalError("stand-in")
    }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/init(url:callback:completionhandler:)-6nut7
    @available(iOS 17.4, macOS 14.4, macCatalyst 17.4, *)
    public init(url URL: URL, callback: ASWebAuthenticationSession.Callback, completionHandler: @escaping CompletionHandler) {
        fatalError("stand-in")
    }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/presentationcontextprovider
    // (`weak var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)?`, iOS 13)
    weak open var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)?

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/prefersephemeralwebbrowsersession
    // (`var prefersEphemeralWebBrowserSession: Bool`, iOS 13)
    open var prefersEphemeralWebBrowserSession: Bool = false

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/start()
    open func start() -> Bool { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/cancel()
    open func cancel() { fatalError("stand-in") }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/callback:
    // `class Callback` (iOS 17.4, macOS 14.4), made by its class methods only (`init()` is
    // unavailable); its conformances list no Sendable.
    @available(iOS 17.4, macOS 14.4, macCatalyst 17.4, *)
    public class Callback: NSObject {
        @available(*, unavailable)
        public override init() { fatalError("stand-in") }

        fileprivate init(standIn: Void) {}

        // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/callback/customscheme(_:)
        public class func customScheme(_ customScheme: String) -> Self { fatalError("stand-in") }

        // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/callback/https(host:path:)
        public class func https(host: String, path: String) -> Self { fatalError("stand-in") }
    }
}

// https://developer.apple.com/documentation/authenticationservices/aspresentationanchor:
// `typealias ASPresentationAnchor = UIWindow` on iOS, `NSWindow` on macOS. This stand-in is
// compiled once per build, after UIKit (iOS) or AppKit (macOS).
#if canImport(UIKit)
import UIKit
public typealias ASPresentationAnchor = UIWindow
#elseif canImport(AppKit)
import AppKit
public typealias ASPresentationAnchor = NSWindow
#endif

// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationpresentationcontextproviding:
// `@MainActor protocol ASWebAuthenticationPresentationContextProviding : NSObjectProtocol` (iOS 13,
// macOS 10.15), with one requirement,
// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationpresentationcontextproviding/presentationanchor(for:).
@MainActor
public protocol ASWebAuthenticationPresentationContextProviding: NSObjectProtocol {
    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor
}

// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsessionerrordomain:
// `let ASWebAuthenticationSessionErrorDomain: String`. The codes of
// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsessionerror/code
// (canceledLogin 1, presentationContextNotProvided 2, presentationContextInvalid 3) are compared
// by raw value in portable code (`WebAuthenticationOutcome`), so they are not declared here.
public let ASWebAuthenticationSessionErrorDomain: String = "com.apple.AuthenticationServices.WebAuthenticationSession"
