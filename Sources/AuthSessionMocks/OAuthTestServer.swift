import Foundation

/// A running OAuth 2.0 / OpenID Connect test server, as `scripts/oauth-test-server`
/// (django-oauth-toolkit) or `scripts/glewlwyd-test-server` (Glewlwyd) describes it in its
/// endpoints JSON: which server it is, where it listens, its user, and one client per grant. What
/// a server does not have is `nil`.
///
/// The project's integration tests, demo and benchmark read it from the file named by the
/// ``environmentVariable`` (`scripts/oauth-test-server run -- COMMAND` sets it) or from a path
/// given on the command line.
///
/// All operations are thread-safe.
public struct OAuthTestServer: Sendable, Hashable, Decodable {

    /// The variable that names the endpoints JSON: `AUTH_SESSION_OAUTH_SERVER`.
    public static let environmentVariable = "AUTH_SESSION_OAUTH_SERVER"

    /// The one command that starts a server, runs the integration suite against it, and stops it.
    public static let integrationCommand =
        "scripts/oauth-test-server run -- swift test --filter AuthSessionOAuth2IntegrationTests"

    /// The server's endpoints.
    ///
    /// All operations are thread-safe.
    public struct Endpoints: Sendable, Hashable, Decodable {
        /// The token endpoint.
        public var token: URL
        /// The authorization endpoint.
        public var authorize: URL
        /// The revocation endpoint.
        public var revoke: URL
        /// The introspection endpoint.
        public var introspect: URL
        /// The userinfo endpoint.
        public var userinfo: URL
        /// The OpenID Connect discovery document.
        public var openidConfiguration: URL
        /// The RFC 8414 metadata document; `nil` when the server serves none (Glewlwyd).
        public var oauthAuthorizationServer: URL?
        /// The key set that verifies the server's ID tokens (`jwks_uri`).
        public var jwks: URL
        /// The device authorization endpoint.
        public var deviceAuthorization: URL
        /// The page where a user approves a device.
        public var deviceVerification: URL
        /// The admin login page, where a scripted user signs in (django-oauth-toolkit); `nil`
        /// for a server whose users sign in elsewhere (``userLogin``).
        public var adminLogin: URL?
        /// The API a scripted user signs in at with a JSON body (Glewlwyd's `/api/auth/`); `nil`
        /// for django-oauth-toolkit.
        public var userLogin: URL?
        /// OpenID Connect RP-initiated logout's `end_session_endpoint`, when the server has one.
        public var endSession: URL?
        /// The pushed authorization request endpoint (RFC 9126), when the server has one.
        public var pushedAuthorizationRequest: URL?
    }

    /// Which server it is.
    ///
    /// All operations are thread-safe.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// django-oauth-toolkit, started by `scripts/oauth-test-server`.
        case djangoOAuthToolkit = "django-oauth-toolkit"
        /// Glewlwyd, started by `scripts/glewlwyd-test-server`.
        case glewlwyd
    }

    /// Which server it is, from the JSON's `server` member; django-oauth-toolkit when it has none
    /// (the first script's files do not say).
    public var kind: Kind { server.flatMap(Kind.init(rawValue:)) ?? .djangoOAuthToolkit }

    /// The JSON's `server` member, as written.
    public var server: String?

    /// The test user.
    ///
    /// All operations are thread-safe.
    public struct User: Sendable, Hashable, Decodable {
        /// The user name.
        public var username: String
        /// The password.
        public var password: String
        /// The email address.
        public var email: String
    }

    /// One registered client.
    ///
    /// All operations are thread-safe.
    public struct Client: Sendable, Hashable, Decodable {
        /// The client identifier.
        public var clientId: String
        /// The client secret; `nil` for a public client.
        public var clientSecret: String?
        /// `public` or `confidential`.
        public var clientType: String
        /// The one grant type the server allows it.
        public var grantType: String
        /// Its redirect URI, for the code flow.
        public var redirectURI: String?
    }

    /// The issuer identifier.
    public var issuer: String

    /// The server's base URL (`http://127.0.0.1:PORT`).
    public var baseURL: URL

    /// The port it listens on.
    public var port: Int

    /// The endpoints.
    public var endpoints: Endpoints

    /// The test user.
    public var user: User

    /// The clients, by role: `authorizationCode`, `password`, `passwordPublic`,
    /// `clientCredentials`, `device`, `introspector`.
    public var clients: [String: Client]

    /// The file where the server logs each token request (grant type and a SHA-256 of the
    /// refresh token presented), one JSON object per line; `nil` for a server that keeps no such
    /// log (Glewlwyd).
    public var tokenRequestLog: String?

    /// The server's refresh-token grace period, in seconds (0: off).
    public var refreshGracePeriodSeconds: Double

    /// The script's state folder for this server (database, logs, endpoints JSON), if it said.
    public var stateDir: String?

    /// Reads the endpoints JSON at `path`.
    ///
    /// - Parameter path: The file's path.
    /// - Returns: The server.
    /// - Throws: The file or decoding error.
    public static func load(from path: String) throws -> OAuthTestServer {
        try JSONDecoder().decode(OAuthTestServer.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The server named by ``environmentVariable``, or `nil` when it is not set or cannot be read.
    public static var fromEnvironment: OAuthTestServer? {
        guard let path = ProcessInfo.processInfo.environment[environmentVariable], !path.isEmpty else { return nil }
        return try? load(from: path)
    }
}
