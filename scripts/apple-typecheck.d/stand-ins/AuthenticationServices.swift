// A stand-in for the part of Apple's AuthenticationServices framework this package uses, with the
// Swift declarations and Sendable annotations of Apple's current documentation, so that the
// package's `#if canImport(AuthenticationServices)` code is type-checked on Linux
// (scripts/apple-typecheck). Bodies never run: only the types matter.

import Foundation

// MARK: ASAuthorizationAppleIDProvider
// https://developer.apple.com/documentation/authenticationservices/asauthorizationappleidprovider:
// `class ASAuthorizationAppleIDProvider`, an NSObject, neither main-actor isolated nor Sendable.

open class ASAuthorizationAppleIDProvider: NSObject {

    public override init() {}

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
