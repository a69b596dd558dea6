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
