import AuthSessionInterface
import Foundation

/// The user of a ``ManagedSession``: a stable subject and the profile fields a server sends.
///
/// Profile fields some providers send only once (Sign in with Apple sends the name and the email
/// on the first sign-in only) are kept here so that a later sign-in can merge them instead of
/// losing them. Equality and hashing use every field.
///
/// All operations are thread-safe.
public struct ManagedUser: AuthSessionUserProtocol, Codable, CustomStringConvertible, CustomReflectable {

    /// The stable subject (OpenID Connect `sub`): the ``identifier``.
    public var identifier: String

    /// The display name, if the server sent one.
    public var name: String?

    /// The email address, if the server sent one.
    public var email: String?

    /// Any other profile claims, by name.
    public var profile: [String: String]

    /// Creates a user.
    ///
    /// - Parameters:
    ///   - identifier: The stable subject.
    ///   - name: The display name.
    ///   - email: The email address.
    ///   - profile: Other profile claims.
    public init(identifier: String, name: String? = nil, email: String? = nil, profile: [String: String] = [:]) {
        self.identifier = identifier
        self.name = name
        self.email = email
        self.profile = profile
    }

    /// `ManagedUser(<identifier>)`: profile fields are personal data, so they are left out.
    public var description: String { "ManagedUser(\(identifier))" }

    /// The identifier and which fields are present, so `dump` and debuggers show no personal data.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "identifier": identifier, "hasName": name != nil, "hasEmail": email != nil,
                "profileFields": profile.keys.sorted(),
            ],
            displayStyle: .struct
        )
    }

    private enum CodingKeys: String, CodingKey {
        case identifier = "subject"
        case name
        case email
        case profile
    }

    /// Decodes a user; a missing `profile` is empty.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for a missing subject or a mistyped field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        profile = try container.decodeIfPresent([String: String].self, forKey: .profile) ?? [:]
    }
}

/// A session as the session manager keeps it: the tokens a server issued, when they expire, the
/// user, and the biometric setting.
///
/// Conforms to `AuthSessionProtocol`, so a handle drives it directly. Its `description`,
/// `debugDescription` and `dump` never show a token, and neither does any error about it.
///
/// All operations are thread-safe.
public struct ManagedSession: AuthSessionProtocol, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The bearer token API calls send.
    public var accessToken: String

    /// The token that obtains a new access token, if the server issued one. Rotating servers
    /// issue a new one with every refresh and accept each only once.
    public var refreshToken: String?

    /// The OpenID Connect ID token, if the server issued one.
    public var idToken: String?

    /// The token type, `Bearer` for OAuth 2.0 bearer tokens.
    public var tokenType: String

    /// The granted scope, space-separated, if the server said.
    public var scope: String?

    /// When the access token expires, in seconds since 1970.
    public var expiresAt: TimeInterval

    /// When the tokens were issued, in seconds since 1970.
    public var issuedAt: TimeInterval

    /// The user the session belongs to.
    public var user: ManagedUser

    /// Whether the user chose to gate the session behind biometrics.
    public var isBiometricAuthenticationEnabled: Bool

    /// A random identifier made at sign-in and kept by every refresh: which sign-in this session
    /// descends from. It tells two people apart when the server names neither (a plain OAuth 2.0
    /// server with no ID token and no userinfo leaves ``ManagedUser/identifier`` empty); see
    /// ``isSameIdentity(as:)``. `nil` for sessions stored before the package kept it.
    public var lineage: String?

    /// The authorization server and the client the tokens were issued to, recorded at sign-in
    /// from the backend's ``RemoteAuthService/sessionOrigin`` and kept by every refresh. A
    /// manager configured for another client or server neither uses nor deletes such a stored
    /// session: it reports ``SessionStoreError/issuedToAnotherClient(stored:configured:)``.
    /// `nil` when the backend names none, or for sessions stored before the package kept it
    /// (the first refresh records it).
    public var origin: SessionOrigin?

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - accessToken: The bearer token.
    ///   - refreshToken: The refresh token, if any.
    ///   - idToken: The ID token, if any.
    ///   - tokenType: The token type; `Bearer` by default.
    ///   - scope: The granted scope, if known.
    ///   - expiresAt: When the access token expires, in seconds since 1970.
    ///   - issuedAt: When the tokens were issued, in seconds since 1970.
    ///   - user: The user.
    ///   - isBiometricAuthenticationEnabled: The biometric setting.
    ///   - lineage: The sign-in this session descends from (``lineage``).
    ///   - origin: The server and client the tokens were issued to (``origin``).
    public init(
        accessToken: String,
        refreshToken: String? = nil,
        idToken: String? = nil,
        tokenType: String = "Bearer",
        scope: String? = nil,
        expiresAt: TimeInterval,
        issuedAt: TimeInterval,
        user: ManagedUser,
        isBiometricAuthenticationEnabled: Bool = false,
        lineage: String? = nil,
        origin: SessionOrigin? = nil
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.tokenType = tokenType
        self.scope = scope
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.user = user
        self.isBiometricAuthenticationEnabled = isBiometricAuthenticationEnabled
        self.lineage = lineage
        self.origin = origin
    }

    /// Whether `other` belongs to the same person as this session: the same subject when both
    /// name one; otherwise (a server that names no subject) the same ``lineage``, so that a
    /// different person's sign-in is never taken for this one. Sessions whose ``origin``s are not
    /// compatible (``SessionOrigin/isCompatible(with:)``) are never the same: a subject is unique
    /// only at its issuer, and tokens issued to one client are no use to another.
    ///
    /// - Parameter other: Another session.
    /// - Returns: `true` if the two are the same person's.
    public func isSameIdentity(as other: ManagedSession) -> Bool {
        if let origin, let otherOrigin = other.origin, !origin.isCompatible(with: otherOrigin) { return false }
        if !user.identifier.isEmpty, !other.user.identifier.isEmpty {
            return user.identifier == other.user.identifier
        }
        guard let lineage, let otherLineage = other.lineage else { return false }
        return lineage == otherLineage
    }

    /// A new random ``lineage``, for a sign-in.
    static func newLineage() -> String {
        UUID().uuidString.lowercased()
    }

    /// The user, the expiry and which tokens are present; never a token.
    public var description: String {
        let tokens = ["access"] + (refreshToken == nil ? [] : ["refresh"]) + (idToken == nil ? [] : ["id"])
        return
            "ManagedSession(user: \(user.identifier), expiresAt: \(expiresAt), tokens: \(tokens.joined(separator: "+")))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without any token, so `dump` and debuggers never show one.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "user": user.identifier,
                "tokenType": tokenType,
                "scope": scope as Any,
                "expiresAt": expiresAt,
                "issuedAt": issuedAt,
                "hasRefreshToken": refreshToken != nil,
                "hasIDToken": idToken != nil,
                "isBiometricAuthenticationEnabled": isBiometricAuthenticationEnabled,
                "lineage": lineage as Any,
                "origin": origin as Any,
                "accessToken": SecretRedactor.placeholder,
            ],
            displayStyle: .struct
        )
    }
}

/// Where a session's tokens were issued: the client identifier they were issued to, the
/// authorization server's issuer identifier when the backend knows it, and the server's origin
/// (scheme, host and port of its token endpoint) when it knows that.
///
/// Tokens are bound to both client and server: a refresh token presented by another client is
/// refused (`invalid_grant`), and one sent to another server is handed to a party that never
/// issued it. So a manager checks the origin a stored session records against its backend's
/// ``RemoteAuthService/sessionOrigin`` (``isCompatible(with:)``) before it uses the session or
/// revokes its tokens.
///
/// All operations are thread-safe.
public struct SessionOrigin: Sendable, Hashable, Codable, CustomStringConvertible {

    /// The issuer identifier (OpenID Connect `iss`), or `nil` when the backend's configuration
    /// names none.
    public var issuer: String?

    /// The client identifier (`client_id`).
    public var clientID: String

    /// The server's origin, `scheme://host[:port]` of its token endpoint, or `nil` if unknown:
    /// what tells two servers apart when one side names no issuer.
    public var server: String?

    /// Creates an origin.
    ///
    /// - Parameters:
    ///   - issuer: The issuer identifier, if known.
    ///   - clientID: The client identifier.
    ///   - server: The server's origin (`scheme://host[:port]`), if known.
    public init(issuer: String?, clientID: String, server: String? = nil) {
        self.issuer = issuer
        self.clientID = clientID
        self.server = server
    }

    /// The origin of `url` as ``server`` records it: `scheme://host[:port]`, lowercased, the
    /// default port left out; `nil` without a scheme or host.
    ///
    /// - Parameter url: An endpoint of the server.
    /// - Returns: Its origin.
    public static func serverOrigin(of url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let isDefault =
            components.port == nil || (scheme == "https" && components.port == 443)
            || (scheme == "http" && components.port == 80)
        return isDefault ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(components.port!)"
    }

    /// Whether tokens issued to this origin may be used by a backend configured for `other`: the
    /// same client; the same issuer when both name one, else the same server when both name one.
    ///
    /// - Parameter other: The other origin.
    /// - Returns: `true` if they may.
    public func isCompatible(with other: SessionOrigin) -> Bool {
        guard clientID == other.clientID else { return false }
        if let issuer, let otherIssuer = other.issuer { return issuer == otherIssuer }
        if let server, let otherServer = other.server { return server == otherServer }
        return true
    }

    /// `client "<id>" at <issuer or server>` (none is a secret), or `client "<id>"`.
    public var description: String {
        let client = "client \"\(SecretRedactor.redactRegistered(clientID))\""
        return (issuer ?? server).map { "\(client) at \(SecretRedactor.redactRegistered($0))" } ?? client
    }

    private enum CodingKeys: String, CodingKey {
        case issuer
        case clientID = "client_id"
        case server
    }
}
