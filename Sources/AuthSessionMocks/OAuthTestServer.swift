import Foundation

/// A running OAuth 2.0 / OpenID Connect test server, as `scripts/oauth-test-server` describes it
/// in its endpoints JSON: where it listens, its user, and one client per grant.
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
        /// The RFC 8414 metadata document.
        public var oauthAuthorizationServer: URL
        /// The key set that verifies the server's ID tokens (`jwks_uri`).
        public var jwks: URL
        /// The device authorization endpoint.
        public var deviceAuthorization: URL
        /// The page where a user approves a device.
        public var deviceVerification: URL
        /// The admin login page, where a scripted user signs in.
        public var adminLogin: URL
    }

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
    /// refresh token presented), one JSON object per line.
    public var tokenRequestLog: String

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
