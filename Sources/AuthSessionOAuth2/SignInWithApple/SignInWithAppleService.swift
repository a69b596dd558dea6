import AuthSession
import AuthSessionProviders
import Foundation

/// Sign in with Apple as a `RemoteAuthService`: the session manager signs in with an Apple
/// credential, re-checks its state at launch and on activation, signs out when Apple revokes it,
/// and deletes the account in one call.
///
/// ```swift
/// let apple = SignInWithAppleService(clientID: "com.example.app", backend: .deviceOnly)
/// let provider = ManagedSessionProvider(store: KeychainSessionStore(service: "com.example.app"), remote: apple)
/// let nonce = SignInWithAppleNonce()   // request.nonce = nonce.hashed
/// try await provider.signIn(with: AppleIDCredential(appleIDCredential), nonce: nonce)
/// ```
///
/// A sign-in checks the identity token before anything else sees it:
/// - its signature, with Apple's keys (``keySetURL``, fetched and cached by a
///   `JSONWebKeySetVerifier`), or with the ``signatureVerifier`` given;
/// - `iss` is ``issuer``, `aud` contains ``clientID`` (the app's bundle identifier, or its
///   Services ID on the web);
/// - `exp` has not passed and `iat` is not in the future, each within ``clockLeeway`` (60 s by
///   default): a token that expired 59 s ago passes, 61 s ago fails;
/// - `nonce` is the SHA-256 of the raw nonce the app made for the request
///   (``SignInWithAppleNonce/hashed``): a sign-in without a nonce is refused;
/// - `sub` is present and is the credential's ``AppleIDCredential/user``.
///
/// Then the ``backend`` exchanges it (``SignInWithAppleBackend/exchange(_:refresh:revoke:deleteAccount:)``),
/// or the session stays on the device (``SignInWithAppleBackend/deviceOnly``). The user is
/// Apple's: `sub`, the name and the email Apple shares on the first authorization only. A later
/// sign-in of the same user carries neither, and the manager keeps them from the session it has
/// (or had, in this run of the app) instead of losing them; Apple's user identifier is kept in
/// the user's profile under ``appleUserIDProfileKey``.
///
/// The credential state comes from ``credentialStates`` (Apple's `ASAuthorizationAppleIDProvider`
/// by default): anything but `authorized` (the user chose "Stop Using Apple ID" in Settings, or
/// the app was transferred) signs out at the next launch or activation. Apple's
/// `credentialRevokedNotification` signs out at once: ``credentialRevocationSignal`` is wired
/// into the manager by default.
///
/// All operations are thread-safe.
public struct SignInWithAppleService: RemoteAuthService {

    /// Apple's issuer, which every identity token's `iss` must equal.
    public static let issuer = "https://appleid.apple.com"

    /// Apple's key set, which verifies identity tokens.
    public static let keySetURL = URL(string: "https://appleid.apple.com/auth/keys")!

    /// The `grant_type` of a Sign in with Apple grant (`AuthGrant.signInWithApple(_:nonce:)`):
    /// what the manager's observer reports for these sign-ins.
    public static let grantType = "urn:authsessionkit:grant-type:apple-id"

    /// The profile key of the session's user that holds Apple's user identifier (`sub`), which
    /// the credential-state check asks about (the user's identifier may be the backend's).
    public static let appleUserIDProfileKey = "apple_user_id"

    /// How long a ``SignInWithAppleBackend/deviceOnly`` session lasts: ten years, that is, until
    /// the user signs out or Apple says the credential is no longer authorized.
    public static let deviceOnlySessionLifetime: TimeInterval = 10 * 365 * 86_400

    /// The audience identity tokens must name: the app's bundle identifier (or Services ID).
    public let clientID: String

    /// What the checked credential is exchanged with.
    public let backend: SignInWithAppleBackend

    /// Where the credential's state comes from.
    public let credentialStates: any AppleIDCredentialStateSource

    /// What checks identity-token signatures.
    public let signatureVerifier: any IDTokenSignatureVerifier

    /// Seconds of clock difference tolerated in `exp` and `iat`.
    public let clockLeeway: TimeInterval

    /// What tells the manager Apple revoked the credential (a pushed notification), or `nil`.
    public let credentialRevocationSignal: (any CredentialRevocationSignal)?

    /// `true`: Apple's credential state is about the user's Apple ID, not about a token, so a
    /// state other than `authorized` signs out at once, even a session whose backend tokens could
    /// still be refreshed.
    public var credentialStateIsFinal: Bool { true }

    let clock: any AuthSessionClock

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - clientID: The app's bundle identifier (or Services ID): the tokens' audience.
    ///   - backend: The app's backend, or ``SignInWithAppleBackend/deviceOnly``.
    ///   - credentialStates: Where the credential's state comes from; Apple's provider by default.
    ///   - revocationSignal: What reports Apple's pushed revocations; Apple's
    ///     `credentialRevokedNotification` by default (`NotificationCenterCredentialRevocationSignal`).
    ///   - signatureVerifier: What checks identity-token signatures; Apple's keys, fetched from
    ///     ``keySetURL``, by default.
    ///   - clock: The clock for `exp` and `iat`.
    ///   - clockLeeway: Seconds of clock difference tolerated; 60 by default.
    public init(
        clientID: String,
        backend: SignInWithAppleBackend,
        credentialStates: any AppleIDCredentialStateSource = AppleIDProviderCredentialStateSource(),
        revocationSignal: (any CredentialRevocationSignal)? = NotificationCenterCredentialRevocationSignal(),
        signatureVerifier: any IDTokenSignatureVerifier = JSONWebKeySetVerifier(
            jwksURI: SignInWithAppleService.keySetURL
        ),
        clock: any AuthSessionClock = SystemClock(),
        clockLeeway: TimeInterval = 60
    ) {
        self.clientID = clientID
        self.backend = backend
        self.credentialStates = credentialStates
        self.credentialRevocationSignal = revocationSignal
        self.signatureVerifier = signatureVerifier
        self.clock = clock
        self.clockLeeway = clockLeeway.isFinite ? max(0, clockLeeway) : 60
    }

    // MARK: RemoteAuthService

    /// Checks the Apple credential a `AuthGrant.signInWithApple(_:nonce:)` grant carries, then
    /// exchanges it with the backend (or keeps it on the device).
    ///
    /// - Parameter grant: A Sign in with Apple grant.
    /// - Returns: The backend's tokens with the user, or the device-only session's.
    /// - Throws: `RemoteAuthError`: `invalidIDToken` for a token that fails a check (see the
    ///   type's documentation), `unsupported` for another grant, the backend's error.
    public func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        guard grant.grantType == Self.grantType else {
            throw RemoteAuthError(.unsupported("grant type \(grant.grantType) (Sign in with Apple takes its own)"))
        }
        let credential = AppleIDCredential(grantParameters: grant.parameters)
        guard let identityToken = credential.identityToken else {
            throw RemoteAuthError(.invalidIDToken(.malformed("the credential has no identity token")))
        }
        // The identity token and the code are redacted from anything the checks or the backend throw.
        let secrets = [identityToken] + (credential.authorizationCode.map { [$0] } ?? [])
        return try await withSecretsRegistered(secrets) { () throws(RemoteAuthError) -> IssuedTokens in
            let claims = try await checkedClaims(of: identityToken, for: credential, rawNonce: grant.expectedNonce)
            let user = Self.user(claims: claims, credential: credential)
            guard let exchange = backend.exchange else {
                return IssuedTokens(
                    accessToken: identityToken,
                    idToken: identityToken,
                    expiresIn: Self.deviceOnlySessionLifetime,
                    user: user
                )
            }
            guard let authorizationCode = credential.authorizationCode, !authorizationCode.isEmpty else {
                throw RemoteAuthError(.unsupported("a credential without an authorization code, for the backend"))
            }
            let authorization = AppleIDAuthorization(
                credential: credential,
                identityToken: identityToken,
                authorizationCode: authorizationCode,
                claims: claims,
                user: user
            )
            var tokens = try await SignInWithAppleBackend.run { try await exchange(authorization) }
            tokens.user = Self.merge(backend: tokens.user, apple: user)
            return tokens
        }
    }

    /// Refreshes the backend's tokens.
    ///
    /// - Parameters:
    ///   - refreshToken: The backend's refresh token.
    ///   - scope: Ignored: the backend decides.
    /// - Returns: The backend's new tokens.
    /// - Throws: `RemoteAuthError`; `unsupported` without a backend refresh (a device-only session
    ///   has no refresh token, so the manager never asks).
    public func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        guard let refresh = backend.refresh else {
            throw RemoteAuthError(.unsupported("refresh without a backend refresh"))
        }
        return try await SignInWithAppleBackend.run { try await refresh(refreshToken) }
    }

    /// Revokes a backend token at sign-out; nothing for a device-only session or a backend
    /// without revocation.
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - kind: Which token it is.
    /// - Throws: `RemoteAuthError` from the backend.
    public func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        guard let revoke = backend.revoke else { return }
        try await SignInWithAppleBackend.run { try await revoke(token, kind) }
    }

    /// Apple's state for the session's Apple user identifier.
    ///
    /// - Parameter session: The session.
    /// - Returns: The state from ``credentialStates``.
    /// - Throws: `RemoteAuthError`: whatever the source throws, which changes nothing.
    public func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        let userID = session.user.profile[Self.appleUserIDProfileKey] ?? session.user.identifier
        guard !userID.isEmpty else {
            throw RemoteAuthError(.unsupported("a session without an Apple user identifier"))
        }
        return try await credentialStates.credentialState(forUserID: userID)
    }

    /// Deletes the account at the backend, which revokes the user's tokens at Apple; for a
    /// device-only session there is nothing at a server, and the manager's sign-out that follows
    /// deletes the device's session.
    ///
    /// - Parameter session: The session of the account.
    /// - Throws: `RemoteAuthError` from the backend.
    public func deleteAccount(of session: ManagedSession) async throws(RemoteAuthError) {
        guard let deleteAccount = backend.deleteAccount else { return }
        try await SignInWithAppleBackend.run { try await deleteAccount(session) }
    }

    // MARK: Checks

    /// The identity token's claims, once its signature and every claim check passed.
    func checkedClaims(
        of identityToken: String,
        for credential: AppleIDCredential,
        rawNonce: String?
    ) async throws(RemoteAuthError) -> IDTokenClaims {
        func refused(_ reason: IDTokenValidationError) -> RemoteAuthError {
            RemoteAuthError(.invalidIDToken(reason))
        }
        let signed: JSONWebSignature
        let claims: IDTokenClaims
        do throws(IDTokenValidationError) {
            signed = try JSONWebSignature(compact: identityToken)
            claims = try IDTokenClaims(parsing: identityToken)
        } catch {
            throw refused(error)
        }
        try await signatureVerifier.verifySignature(of: signed)
        guard let rawNonce else { throw refused(.nonceMismatch) }
        do throws(IDTokenValidationError) {
            try claims.validate(
                issuer: Self.issuer,
                clientID: clientID,
                expectedNonce: SignInWithAppleNonce.hash(rawNonce),
                now: clock.now,
                leeway: clockLeeway
            )
        } catch {
            throw refused(error)
        }
        guard claims.subject == credential.user else {
            throw refused(
                .subjectMismatch(
                    expected: String(credential.user.prefix(120)),
                    actual: String(claims.subject.prefix(120))
                )
            )
        }
        return claims
    }

    /// Apple's user: `sub`, the name and email shared (the email from the token when the
    /// credential has none), and Apple's identifier in the profile.
    static func user(claims: IDTokenClaims, credential: AppleIDCredential) -> ManagedUser {
        var profile = [appleUserIDProfileKey: claims.subject]
        if let name = credential.fullName {
            profile["given_name"] = name.givenName
            profile["middle_name"] = name.middleName
            profile["family_name"] = name.familyName
            profile["name_prefix"] = name.namePrefix
            profile["name_suffix"] = name.nameSuffix
            profile["nickname"] = name.nickname
        }
        return ManagedUser(
            subject: claims.subject,
            name: nil,
            email: credential.email ?? claims.email,
            profile: profile
        )
    }

    /// The backend's user, its missing fields taken from Apple's; Apple's when it named none.
    static func merge(backend: ManagedUser?, apple: ManagedUser) -> ManagedUser {
        guard let backend else { return apple }
        return ManagedUser(
            identifier: backend.identifier,
            name: backend.name ?? apple.name,
            email: backend.email ?? apple.email,
            profile: apple.profile.merging(backend.profile) { _, fromBackend in fromBackend }
        )
    }
}
