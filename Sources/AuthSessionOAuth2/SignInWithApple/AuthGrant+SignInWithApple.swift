import AuthSessionProviders
import Foundation

extension AuthGrant {

    /// A Sign in with Apple grant: the credential Apple returned and the nonce the request was
    /// made with, for a ``SignInWithAppleService`` to check and exchange.
    ///
    /// Its `AuthGrant.grantType` is ``SignInWithAppleService/grantType``. Like every grant, its
    /// description shows parameter names only.
    ///
    /// - Parameters:
    ///   - credential: The credential.
    ///   - nonce: The nonce whose ``SignInWithAppleNonce/hashed`` value the request carried.
    /// - Returns: The grant.
    public static func signInWithApple(_ credential: AppleIDCredential, nonce: SignInWithAppleNonce) -> AuthGrant {
        var parameters = ["user": credential.user, "real_user_status": String(credential.realUserStatus.rawValue)]
        parameters["identity_token"] = credential.identityToken
        parameters["authorization_code"] = credential.authorizationCode
        parameters["email"] = credential.email
        parameters["state"] = credential.state
        if let name = credential.fullName {
            for (key, path) in AppleIDCredential.nameParameters {
                parameters[key] = name[keyPath: path]
            }
        }
        return AuthGrant(grantType: SignInWithAppleService.grantType, parameters: parameters, expectedNonce: nonce.raw)
    }
}

extension AppleIDCredential {

    /// The grant parameters that carry the name's parts.
    static var nameParameters: [(String, WritableKeyPath<PersonNameComponents, String?>)] {
        [
            ("given_name", \.givenName), ("middle_name", \.middleName), ("family_name", \.familyName),
            ("name_prefix", \.namePrefix), ("name_suffix", \.nameSuffix), ("nickname", \.nickname),
        ]
    }

    /// The credential a `AuthGrant.signInWithApple(_:nonce:)` grant carries.
    init(grantParameters parameters: [String: String]) {
        var name = PersonNameComponents()
        var hasName = false
        for (key, path) in Self.nameParameters {
            if let part = parameters[key] {
                name[keyPath: path] = part
                hasName = true
            }
        }
        self.init(
            user: parameters["user"] ?? "",
            identityToken: parameters["identity_token"],
            authorizationCode: parameters["authorization_code"],
            fullName: hasName ? name : nil,
            email: parameters["email"],
            realUserStatus: RealUserStatus(detectionStatusRawValue: Int(parameters["real_user_status"] ?? "") ?? 0),
            state: parameters["state"]
        )
    }
}

extension ManagedSessionProvider {

    /// Signs in with a Sign in with Apple credential: `AuthGrant.signInWithApple(_:nonce:)`
    /// through `signIn(with:)`, so the session is checked by the ``SignInWithAppleService`` (the
    /// manager's `remote`), stored, and only then signed in; the name and email of an earlier
    /// sign-in are kept when this one carries none.
    ///
    /// - Parameters:
    ///   - credential: What Apple returned (`AppleIDCredential(appleIDCredential)`).
    ///   - nonce: The nonce whose ``SignInWithAppleNonce/hashed`` value the request carried.
    /// - Returns: The new session.
    /// - Throws: `ManagedSessionError`, as `signIn(with:)` throws it.
    @discardableResult
    public func signIn(
        with credential: AppleIDCredential,
        nonce: SignInWithAppleNonce
    ) async throws(ManagedSessionError) -> ManagedSession {
        try await signIn(with: AuthGrant.signInWithApple(credential, nonce: nonce))
    }
}
