import AuthSessionInterface
import AuthSessionProviders
import Foundation

/// Who the client is to the authorization server, and how it proves it (RFC 6749 §2.3).
///
/// ``description`` never shows the secret.
///
/// All operations are thread-safe.
public struct OAuth2Client: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// How a client authenticates at the token, revocation and introspection endpoints.
    ///
    /// All operations are thread-safe.
    public enum Authentication: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {

        /// A public client (an app on a user's device): it sends `client_id` in the body and no
        /// secret. Use PKCE with it.
        case none

        /// HTTP Basic with the form-encoded identifier and secret (`client_secret_basic`).
        case clientSecretBasic(secret: String)

        /// `client_id` and `client_secret` in the form body (`client_secret_post`).
        case clientSecretPost(secret: String)

        /// The method's name (`none`, `client_secret_basic`, `client_secret_post`); never the
        /// secret.
        public var description: String {
            switch self {
            case .none: return "none"
            case .clientSecretBasic: return "client_secret_basic"
            case .clientSecretPost: return "client_secret_post"
            }
        }

        /// The same as ``description``.
        public var debugDescription: String { description }

        /// A mirror with the method's name only.
        public var customMirror: Mirror {
            Mirror(self, children: ["method": description], displayStyle: .enum)
        }
    }

    /// The client identifier.
    public var id: String

    /// How the client authenticates.
    public var authentication: Authentication

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - id: The client identifier.
    ///   - authentication: How it authenticates; a public client by default.
    public init(id: String, authentication: Authentication = .none) {
        self.id = id
        self.authentication = authentication
    }

    /// The identifier and the authentication method; never the secret.
    public var description: String {
        "OAuth2Client(\(id), \(authentication))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the secret.
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "authentication": description], displayStyle: .struct)
    }
}

/// The server's endpoints a client uses; only the token endpoint is required.
///
/// All operations are thread-safe.
public struct OAuth2Endpoints: Sendable, Hashable {

    /// The token endpoint (RFC 6749 §3.2).
    public var token: URL

    /// The authorization endpoint (RFC 6749 §3.1), for the code flow.
    public var authorization: URL?

    /// The revocation endpoint (RFC 7009).
    public var revocation: URL?

    /// The introspection endpoint (RFC 7662).
    public var introspection: URL?

    /// The OpenID Connect userinfo endpoint.
    public var userInfo: URL?

    /// The device authorization endpoint (RFC 8628).
    public var deviceAuthorization: URL?

    /// Creates a set of endpoints.
    ///
    /// - Parameters:
    ///   - token: The token endpoint.
    ///   - authorization: The authorization endpoint.
    ///   - revocation: The revocation endpoint.
    ///   - introspection: The introspection endpoint.
    ///   - userInfo: The userinfo endpoint.
    ///   - deviceAuthorization: The device authorization endpoint.
    public init(
        token: URL,
        authorization: URL? = nil,
        revocation: URL? = nil,
        introspection: URL? = nil,
        userInfo: URL? = nil,
        deviceAuthorization: URL? = nil
    ) {
        self.token = token
        self.authorization = authorization
        self.revocation = revocation
        self.introspection = introspection
        self.userInfo = userInfo
        self.deviceAuthorization = deviceAuthorization
    }
}

/// Everything an ``OAuth2Service`` needs: the server, the client, and the limits it keeps to.
///
/// All operations are thread-safe.
public struct OAuth2Configuration: Sendable, Hashable {

    /// The issuer identifier every ID token's `iss` must equal. `nil` skips that one check
    /// (explicit endpoints without discovery); the other claim checks still run.
    public var issuer: String?

    /// The endpoints.
    public var endpoints: OAuth2Endpoints

    /// The client.
    public var client: OAuth2Client

    /// The scopes asked for when a grant names none; empty asks for the server's default.
    public var scope: [String]

    /// How the client authenticates at the introspection endpoint; `nil` uses ``client``.
    /// Servers often want a resource server's credentials there.
    public var introspectionClient: OAuth2Client?

    /// Seconds a request may take, from sending to the last byte of its answer, before it fails
    /// with `RemoteAuthError.Reason.timedOut`. A value that is not a positive finite number
    /// counts as 30, and one over a day as a day.
    public var requestTimeout: TimeInterval

    /// The largest answer accepted, in bytes; 256 KiB by default.
    public var maximumResponseSize: Int

    /// Seconds of clock difference tolerated between the device and the server: in the time
    /// claims of a sign-in's ID token, and near an access token's expiry when judging whether
    /// an inactive token means a revoked session.
    public var clockLeeway: TimeInterval

    /// The longest access-token lifetime accepted (`expires_in`), in seconds; ten years by
    /// default. A larger value is an invalid answer, not a token that never expires.
    public var maximumTokenLifetime: TimeInterval

    /// Whether a sign-in without an ID token asks the userinfo endpoint who the user is (when
    /// the scope includes `openid`). A failure there leaves the user unknown; it does not fail
    /// the sign-in.
    public var fetchesUserInfo: Bool

    /// Whether plain `http` is allowed for hosts other than loopback. Off: tokens sent in the
    /// clear to the network are a bug.
    public var allowsInsecureHTTP: Bool

    /// The issuer's key set URL (`jwks_uri`): every ID token's signature is verified with the keys
    /// fetched from it (see `JSONWebKeySetVerifier`). Discovery sets it when the metadata names one.
    /// `nil` with no ``keySet``: signatures are not verified, only the claims.
    public var jwksURI: URL?

    /// A fixed key set to verify ID-token signatures with, instead of fetching ``jwksURI``: for a
    /// server whose keys the app pins.
    public var keySet: JSONWebKeySet?

    /// Whether every authorization response must carry the server's ``issuer`` as `iss` (RFC
    /// 9207): `true` when the server's metadata advertises
    /// `authorization_response_iss_parameter_supported`. An `iss` that is present is checked
    /// either way.
    public var requiresIssuerInAuthorizationResponse: Bool = false

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - issuer: The issuer identifier ID tokens must carry.
    ///   - endpoints: The endpoints.
    ///   - client: The client.
    ///   - scope: The default scopes.
    ///   - introspectionClient: The introspection endpoint's credentials, if not ``client``'s.
    ///   - requestTimeout: The request timeout, in seconds.
    ///   - maximumResponseSize: The largest answer, in bytes.
    ///   - clockLeeway: Tolerated clock difference, in seconds.
    ///   - maximumTokenLifetime: The longest `expires_in` accepted, in seconds.
    ///   - fetchesUserInfo: Whether a sign-in without an ID token asks userinfo.
    ///   - allowsInsecureHTTP: Whether plain `http` to non-loopback hosts is allowed.
    ///   - jwksURI: The issuer's key set URL, to verify ID-token signatures with.
    ///   - keySet: A fixed key set to verify ID-token signatures with.
    public init(
        issuer: String?,
        endpoints: OAuth2Endpoints,
        client: OAuth2Client,
        scope: [String] = [],
        introspectionClient: OAuth2Client? = nil,
        requestTimeout: TimeInterval = 30,
        maximumResponseSize: Int = 256 * 1024,
        clockLeeway: TimeInterval = 60,
        maximumTokenLifetime: TimeInterval = 10 * 365 * 86_400,
        fetchesUserInfo: Bool = true,
        allowsInsecureHTTP: Bool = false,
        jwksURI: URL? = nil,
        keySet: JSONWebKeySet? = nil
    ) {
        self.issuer = issuer
        self.endpoints = endpoints
        self.client = client
        self.scope = scope
        self.introspectionClient = introspectionClient
        self.requestTimeout = requestTimeout > 0 && requestTimeout.isFinite ? min(requestTimeout, 86_400) : 30
        self.maximumResponseSize = maximumResponseSize
        self.clockLeeway = clockLeeway.isFinite ? max(0, clockLeeway) : 60
        self.maximumTokenLifetime = maximumTokenLifetime
        self.fetchesUserInfo = fetchesUserInfo
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.jwksURI = jwksURI
        self.keySet = keySet
    }

    /// A configuration from a server's metadata: its issuer, the endpoints it advertises, and its
    /// `jwks_uri`, so that ID-token signatures are verified.
    ///
    /// The introspection endpoint is adopted only when something can authenticate there: a
    /// `client` with a secret, or an `introspectionClient`. RFC 7662 §2.1 requires the caller to
    /// be authorized, and a public client is not (servers answer 401 or 403, and every launch's
    /// credential check would fail): without it, the session manager's credential check asks the
    /// userinfo endpoint instead. For a server that does answer a public client's introspection,
    /// set `endpoints.introspection` to `metadata.introspectionEndpoint` afterwards.
    ///
    /// - Parameters:
    ///   - metadata: The discovered metadata.
    ///   - client: The client.
    ///   - scope: The default scopes.
    ///   - introspectionClient: The introspection endpoint's credentials, if not `client`'s.
    public init(
        metadata: OAuth2ServerMetadata,
        client: OAuth2Client,
        scope: [String] = [],
        introspectionClient: OAuth2Client? = nil
    ) {
        let authenticates = (introspectionClient ?? client).authentication != .none
        self.init(
            issuer: metadata.issuer,
            endpoints: OAuth2Endpoints(
                token: metadata.tokenEndpoint,
                authorization: metadata.authorizationEndpoint,
                revocation: metadata.revocationEndpoint,
                introspection: authenticates ? metadata.introspectionEndpoint : nil,
                userInfo: metadata.userInfoEndpoint,
                deviceAuthorization: metadata.deviceAuthorizationEndpoint
            ),
            client: client,
            scope: scope,
            introspectionClient: introspectionClient,
            jwksURI: metadata.jwksURI
        )
        requiresIssuerInAuthorizationResponse = metadata.authorizationResponseIssParameterSupported
    }
}
