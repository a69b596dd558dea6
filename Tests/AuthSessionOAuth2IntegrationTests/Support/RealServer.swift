import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real authorization server the suite runs against, when `scripts/oauth-test-server`
/// started one; `nil` otherwise, and the suites that need it are skipped.
enum RealServer {

    static let description: OAuthTestServer? = OAuthTestServer.fromEnvironment

    static var isRunning: Bool { description != nil }

    /// Which server runs.
    static var kind: OAuthTestServer.Kind? { description?.kind }

    /// What a test needs that only django-oauth-toolkit (with the project's script) gives; each
    /// says why Glewlwyd does not, for the skip's note.
    enum Feature: String {
        case tokenRequestLog =
            "a log of every token request (the django script's middleware; Glewlwyd logs none with its grant type)"
        case signingKeyRotation = "a signing key rotated by the script (rotate-key)"
        case deviceCodeExpiry = "a device code expired on demand (expire-device-code)"
        case anyLoopbackPort =
            "a redirect URI on any loopback port (RFC 8252 §7.3): Glewlwyd matches redirect URIs exactly, so a listener's ephemeral port is refused"
        case consentRefusal = "a refusal on the consent page that reaches the client: Glewlwyd's web app has none"
        case refreshGracePeriod = "a refresh-token grace period set at start (--grace-period)"
    }

    /// Whether the running server gives `feature`.
    static func supports(_ feature: Feature) -> Bool { kind == .djangoOAuthToolkit }

    /// The skip note of a test that needs `feature`.
    static func lacking(_ feature: Feature) -> Comment {
        "skipped against \(kind?.rawValue ?? "no server"): needs \(feature.rawValue)"
    }

    /// Why a suite was skipped, and the one command that runs it.
    static let skipNote: Comment =
        "no authorization server: run `\(OAuthTestServer.integrationCommand)`"

    /// The server, for a test that only runs when it is there.
    static func require() throws -> OAuthTestServer {
        try #require(description, "skipped without a server")
    }

    /// A service for the client of `role`, authenticated as the endpoints JSON says, with the
    /// endpoints rewritten by `route` (through a fault proxy) when one is given.
    static func service(
        role: String,
        authentication: OAuth2Client.Authentication? = nil,
        scope: [String] = [],
        through route: (@Sendable (URL) -> URL)? = nil,
        timeout: TimeInterval = 10,
        clock: any AuthSessionClock = SystemClock(),
        issuer: String? = nil,
        clockLeeway: TimeInterval = 60
    ) throws -> OAuth2Service {
        let server = try require()
        let client = try #require(server.clients[role], "no client for role \(role)")
        let method: OAuth2Client.Authentication =
            authentication ?? client.clientSecret.map { .clientSecretBasic(secret: $0) } ?? .none
        let rewrite: (URL) -> URL = { url in route?(url) ?? url }
        let endpoints = server.endpoints
        let configuration = OAuth2Configuration(
            issuer: issuer ?? server.issuer,
            endpoints: OAuth2Endpoints(
                token: rewrite(endpoints.token),
                authorization: rewrite(endpoints.authorize),
                revocation: rewrite(endpoints.revoke),
                introspection: rewrite(endpoints.introspect),
                userInfo: rewrite(endpoints.userinfo),
                deviceAuthorization: rewrite(endpoints.deviceAuthorization)
            ),
            client: OAuth2Client(id: client.clientId, authentication: method),
            scope: scope,
            introspectionClient: try introspector(server),
            requestTimeout: timeout,
            clockLeeway: clockLeeway,
            // Straight to the server, not through `route`: a fault proxy's subject is the token
            // endpoint, and every real ID token is verified with the real keys.
            jwksURI: endpoints.jwks
        )
        return OAuth2Service(configuration: configuration, transport: URLSessionTransport(), clock: clock)
    }

    /// The credentials the introspection endpoint accepts.
    static func introspector(_ server: OAuthTestServer) throws -> OAuth2Client? {
        guard let client = server.clients["introspector"], let secret = client.clientSecret else { return nil }
        return OAuth2Client(id: client.clientId, authentication: .clientSecretBasic(secret: secret))
    }

    /// Tokens for the test user through the confidential password client.
    static func signIn(_ service: OAuth2Service, scope: [String]? = nil) async throws -> IssuedTokens {
        let server = try require()
        return try await service.obtainTokens(
            with: .password(username: server.user.username, password: server.user.password, scope: scope)
        )
    }

    /// The server's token-request log: one entry per `POST /o/token/`.
    static func tokenRequests() throws -> [TokenRequestRecord] {
        let server = try require()
        let text = server.tokenRequestLog.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        return text.split(separator: "\n").compactMap { line in
            try? JSONDecoder().decode(TokenRequestRecord.self, from: Data(line.utf8))
        }
    }
}

/// One line of the server's token-request log.
struct TokenRequestRecord: Decodable, Hashable {
    var grantType: String?
    var refreshTokenSHA256: String?
    var status: Int?

    private enum CodingKeys: String, CodingKey {
        case grantType = "grant_type"
        case refreshTokenSHA256 = "refresh_token_sha256"
        case status
    }
}

/// The project's server script, for what only it can do (expire a device code, restart).
enum ServerScript {

    /// The running server's script: `scripts/oauth-test-server` or `scripts/glewlwyd-test-server`.
    static var path: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent(
                RealServer.kind == .glewlwyd ? "scripts/glewlwyd-test-server" : "scripts/oauth-test-server"
            )
            .path
    }

    /// Runs the script with `arguments` and the running server's state folder; throws on failure.
    static func run(_ arguments: [String]) throws {
        let server = try RealServer.require()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        var all = [arguments[0]]
        if let stateDir = server.stateDir {
            all += ["--state-dir", stateDir]
        }
        process.arguments = all + arguments.dropFirst()
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(
            process.terminationStatus == 0,
            "oauth-test-server \(arguments) exited \(process.terminationStatus)"
        )
    }
}
