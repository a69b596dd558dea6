import Foundation

/// The backend a session manager talks to: it issues tokens for a grant, refreshes them,
/// revokes them, and says whether a user's credential still stands.
///
/// Implement it for any backend: an OAuth 2.0 / OpenID Connect server (`OAuth2Service` in
/// `AuthSessionOAuth2`), Sign in with Apple, Supabase, or your own API. Every method throws a
/// ``RemoteAuthError`` whose ``RemoteAuthError/kind`` tells the caller what to do: retry later
/// (``RemoteAuthError/Kind/transient``), end the session (``RemoteAuthError/Kind/terminal``), or
/// report a setup bug and stop (``RemoteAuthError/Kind/misconfiguration``). Map your backend's
/// errors to those three with care: a network blip classified as terminal signs a user out.
///
/// Conformers must be thread-safe; calls may overlap.
public protocol RemoteAuthService: Sendable {

    /// Exchanges `grant` for tokens: a sign-in.
    ///
    /// - Parameter grant: What the user or client presents (an authorization code, a password,
    ///   a device code, ...).
    /// - Returns: The tokens issued, and the user when the backend says who it is.
    /// - Throws: ``RemoteAuthError``.
    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens

    /// Presents `refreshToken` for new tokens.
    ///
    /// A rotating server accepts each refresh token once: presenting a spent one is answered
    /// with a terminal error, and some servers then revoke every token of the session. Callers
    /// must never present the same refresh token twice.
    ///
    /// - Parameters:
    ///   - refreshToken: The refresh token.
    ///   - scope: The scopes to ask for, or `nil` for those granted before.
    /// - Returns: The new tokens. A server that does not rotate may return no refresh token:
    ///   keep the one presented.
    /// - Throws: ``RemoteAuthError``.
    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens

    /// Asks the backend to revoke `token` (RFC 7009); revoking a token of a pair may revoke both.
    ///
    /// - Parameters:
    ///   - token: The token to revoke.
    ///   - kind: Which token it is, as a hint to the backend.
    /// - Throws: ``RemoteAuthError``; an unknown or already revoked token is not an error.
    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError)

    /// Asks the backend whether the credential behind `session` still stands.
    ///
    /// - Parameter session: The session to check.
    /// - Returns: The credential's state. Anything but ``CredentialState/authorized`` ends the
    ///   session.
    /// - Throws: ``RemoteAuthError``: a network failure says nothing about the credential.
    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState

    /// Deletes the user's account at the backend, and revokes what the backend holds for it (for
    /// Sign in with Apple, its tokens at Apple: App Store Review Guideline 5.1.1(v)).
    ///
    /// ``ManagedSessionProvider/deleteAccount()`` calls it, then signs out. The default throws
    /// ``RemoteAuthError/Reason/unsupported(_:)``: a backend offers deletion by implementing it.
    ///
    /// - Parameter session: The session of the account to delete, with an access token valid now.
    /// - Throws: ``RemoteAuthError``; the account stands after any error.
    func deleteAccount(of session: ManagedSession) async throws(RemoteAuthError)

    /// What tells of a revocation the backend pushes (Sign in with Apple's
    /// `credentialRevokedNotification`), for a manager whose configuration names none; `nil` (the
    /// default) for a backend that pushes nothing.
    var credentialRevocationSignal: (any CredentialRevocationSignal)? { get }

    /// Whether a ``credentialState(for:)`` answer other than ``CredentialState/authorized`` is
    /// the final word on the user, so the manager signs out on it at once.
    ///
    /// `false` (the default): the answer is about a token (an OAuth 2.0 server's introspection of
    /// an access token another process may have rotated away), so for a session with a refresh
    /// token the manager confirms it with a refresh first, and signs out only on a terminal
    /// answer. `true` for Sign in with Apple, whose state is about the user's Apple ID, which the
    /// app's own backend tokens know nothing of.
    var credentialStateIsFinal: Bool { get }

    /// The server and client this backend's tokens are issued to, recorded in every session it
    /// signs in (``ManagedSession/origin``); `nil` (the default) for a backend that names none.
    /// A stored session that records another origin is neither used nor deleted by a manager over
    /// this backend (``SessionStoreError/issuedToAnotherClient(stored:configured:)``): a
    /// configuration change is a misconfiguration the app hears, never tokens sent to the wrong
    /// party or lost in silence.
    var sessionOrigin: SessionOrigin? { get }
}

extension RemoteAuthService {

    /// Throws ``RemoteAuthError/Reason/unsupported(_:)``: this backend deletes no account.
    ///
    /// - Parameter session: The session.
    /// - Throws: Always.
    public func deleteAccount(of session: ManagedSession) async throws(RemoteAuthError) {
        throw RemoteAuthError(.unsupported("account deletion"))
    }

    /// `nil`: this backend pushes no revocation.
    public var credentialRevocationSignal: (any CredentialRevocationSignal)? { nil }

    /// `false`: a verdict is confirmed by a refresh before it signs out.
    public var credentialStateIsFinal: Bool { false }

    /// `nil`: this backend names no origin, and sessions are not compared.
    public var sessionOrigin: SessionOrigin? { nil }
}

/// Which token a value is, for revocation and introspection hints.
///
/// All operations are thread-safe.
public enum TokenKind: String, Sendable, Hashable, CaseIterable {

    /// An access token (`access_token`).
    case accessToken = "access_token"

    /// A refresh token (`refresh_token`).
    case refreshToken = "refresh_token"
}

/// What the backend says of a user's credential, as Sign in with Apple reports it.
///
/// All operations are thread-safe.
public enum CredentialState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {

    /// The credential stands: keep the session.
    case authorized

    /// The user or the backend revoked it: sign out.
    case revoked

    /// The backend does not know it: sign out.
    case notFound

    /// The account moved to another team or owner: sign out.
    case transferred

    /// The state's name.
    public var description: String { rawValue }
}

/// What a client presents to obtain tokens: a grant type and its parameters (RFC 6749 §4).
///
/// Build one with a factory (``authorizationCode(_:codeVerifier:redirectURI:nonce:)``,
/// ``password(username:password:scope:)``, ``clientCredentials``, ``deviceCode(_:)``) or
/// ``init(grantType:parameters:scope:expectedNonce:)`` for an extension grant. Parameter values
/// are secrets: ``description`` shows the grant type and the parameter names only.
///
/// All operations are thread-safe.
public struct AuthGrant: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The `grant_type` value.
    public var grantType: String

    /// The grant's form parameters, sent as they are (without `grant_type` and `scope`).
    public var parameters: [String: String]

    /// The scopes to ask for, or `nil` for the backend's default.
    public var scope: [String]?

    /// The `nonce` the ID token must carry (OpenID Connect), or `nil` when none was sent. Not
    /// sent to the token endpoint: the client checks it.
    public var expectedNonce: String?

    /// Creates a grant.
    ///
    /// - Parameters:
    ///   - grantType: The `grant_type` value.
    ///   - parameters: The grant's form parameters.
    ///   - scope: The scopes to ask for.
    ///   - expectedNonce: The `nonce` the ID token must carry.
    public init(
        grantType: String,
        parameters: [String: String] = [:],
        scope: [String]? = nil,
        expectedNonce: String? = nil
    ) {
        self.grantType = grantType
        self.parameters = parameters
        self.scope = scope
        self.expectedNonce = expectedNonce
    }

    /// The authorization-code grant (RFC 6749 §4.1), with the PKCE verifier (RFC 7636).
    ///
    /// - Parameters:
    ///   - code: The code from the redirect.
    ///   - codeVerifier: The PKCE verifier whose challenge the authorization request carried.
    ///   - redirectURI: The redirect URI the authorization request used.
    ///   - nonce: The `nonce` the authorization request sent, which the ID token must carry.
    /// - Returns: The grant.
    public static func authorizationCode(
        _ code: String,
        codeVerifier: String?,
        redirectURI: URL,
        nonce: String? = nil
    ) -> AuthGrant {
        var parameters = ["code": code, "redirect_uri": redirectURI.absoluteString]
        parameters["code_verifier"] = codeVerifier
        return AuthGrant(grantType: "authorization_code", parameters: parameters, expectedNonce: nonce)
    }

    /// The resource-owner password grant (RFC 6749 §4.3). OAuth 2.1 drops it; use it only with
    /// a server you own.
    ///
    /// - Parameters:
    ///   - username: The user name.
    ///   - password: The password.
    ///   - scope: The scopes to ask for.
    /// - Returns: The grant.
    public static func password(username: String, password: String, scope: [String]? = nil) -> AuthGrant {
        AuthGrant(grantType: "password", parameters: ["username": username, "password": password], scope: scope)
    }

    /// The client-credentials grant (RFC 6749 §4.4): the client acts for itself; no user, no
    /// refresh token.
    public static let clientCredentials = AuthGrant(grantType: "client_credentials")

    /// The device-code grant (RFC 8628 §3.4), as polled once the user approved.
    ///
    /// - Parameter deviceCode: The `device_code` from the device authorization response.
    /// - Returns: The grant.
    public static func deviceCode(_ deviceCode: String) -> AuthGrant {
        AuthGrant(grantType: "urn:ietf:params:oauth:grant-type:device_code", parameters: ["device_code": deviceCode])
    }

    /// The grant type and the parameter names; never a value.
    public var description: String {
        "AuthGrant(\(grantType), parameters: [\(parameters.keys.sorted().joined(separator: ", "))])"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without any parameter value.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["grantType": grantType, "parameterNames": parameters.keys.sorted(), "scope": scope as Any],
            displayStyle: .struct
        )
    }
}

/// The tokens a backend issued, and who they belong to when it said.
///
/// ``description`` never shows a token.
///
/// All operations are thread-safe.
public struct IssuedTokens: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The access token.
    public var accessToken: String

    /// The refresh token, if one was issued. `nil` after a refresh means "keep the one you have".
    public var refreshToken: String?

    /// The OpenID Connect ID token, if one was issued; its claims were checked.
    public var idToken: String?

    /// The token type, `Bearer` for bearer tokens.
    public var tokenType: String

    /// Seconds the access token lives from issue, if the backend said.
    public var expiresIn: TimeInterval?

    /// The granted scopes, if the backend said.
    public var scope: [String]?

    /// The user, if the backend said who it is (an ID token's claims, userinfo).
    public var user: ManagedUser?

    /// The subject of an ID token that could not be verified (a refresh whose key could not be
    /// had right now), for one use only: a session manager compares it with the session's user and
    /// refuses the tokens of another; it never stores it. `nil` otherwise.
    public var unverifiedSubject: String?

    /// How far the server's clock is ahead of this device's (negative: behind), in seconds, when
    /// the answer showed a measurable difference (an OAuth 2.0 client measures it from the token
    /// endpoint's `Date` header); `nil` when it showed none. The ID token's time claims were
    /// checked on the server's clock; ``expiresIn`` is a duration, which no offset changes.
    public var serverClockOffset: TimeInterval?

    /// Creates issued tokens.
    ///
    /// - Parameters:
    ///   - accessToken: The access token.
    ///   - refreshToken: The refresh token.
    ///   - idToken: The ID token.
    ///   - tokenType: The token type.
    ///   - expiresIn: Seconds the access token lives.
    ///   - scope: The granted scopes.
    ///   - user: The user.
    ///   - unverifiedSubject: The subject of an ID token that could not be verified.
    ///   - serverClockOffset: How far the server's clock is ahead of this device's.
    public init(
        accessToken: String,
        refreshToken: String? = nil,
        idToken: String? = nil,
        tokenType: String = "Bearer",
        expiresIn: TimeInterval? = nil,
        scope: [String]? = nil,
        user: ManagedUser? = nil,
        unverifiedSubject: String? = nil,
        serverClockOffset: TimeInterval? = nil
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.scope = scope
        self.user = user
        self.unverifiedSubject = unverifiedSubject
        self.serverClockOffset = serverClockOffset
    }

    /// Which tokens are present, the lifetime and the user; never a token.
    public var description: String {
        let tokens = ["access"] + (refreshToken == nil ? [] : ["refresh"]) + (idToken == nil ? [] : ["id"])
        let lifetime = expiresIn.map { "\($0) s" } ?? "unknown"
        return
            "IssuedTokens(tokens: \(tokens.joined(separator: "+")), expiresIn: \(lifetime), user: \(user?.identifier ?? "none"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without any token.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "tokenType": tokenType, "expiresIn": expiresIn as Any, "scope": scope as Any,
                "user": user?.identifier as Any, "hasRefreshToken": refreshToken != nil, "hasIDToken": idToken != nil,
            ],
            displayStyle: .struct
        )
    }
}
