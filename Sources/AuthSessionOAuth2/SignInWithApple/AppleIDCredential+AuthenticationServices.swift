#if canImport(AuthenticationServices) && !os(watchOS)
import AuthenticationServices
import Foundation

extension AppleIDCredential {

    /// The credential Apple returned, as a portable value.
    ///
    /// Reads each field once and hands it, raw, to
    /// ``init(user:identityTokenData:authorizationCodeData:fullName:email:realUserStatusRawValue:state:)``,
    /// which decodes it (and is what the tests check on every platform).
    ///
    /// Call it where the credential arrives (`ASAuthorizationControllerDelegate`, on the main
    /// actor), before any `Task` or `await`: Apple's credential is `Sendable` only from iOS 16.4 and
    /// macOS 13.3, this value everywhere.
    ///
    /// - Parameter credential: `ASAuthorization.credential`, as an Apple ID credential.
    public init(_ credential: ASAuthorizationAppleIDCredential) {
        self.init(
            user: credential.user,
            identityTokenData: credential.identityToken,
            authorizationCodeData: credential.authorizationCode,
            fullName: credential.fullName,
            email: credential.email,
            realUserStatusRawValue: credential.realUserStatus.rawValue,
            state: credential.state
        )
    }
}
#endif
