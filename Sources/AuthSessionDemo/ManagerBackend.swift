import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which authorization server the session-manager scenarios talk to.
enum BackendChoice: Sendable {
    /// A fresh `InProcessAuthorizationServer` per scenario.
    case inProcess
    /// The real server an endpoints JSON describes (`scripts/oauth-test-server`).
    case real(OAuthTestServer)

    /// The server, for a part's heading.
    var partDescription: String {
        switch self {
        case .inProcess: "an in-process authorization server"
        case .real(let server): "the real server at \(server.issuer)"
        }
    }
}

/// The authorization server of one session-manager scenario, and what the demo asks of it
/// beside the manager's own calls: counts, a revocation from another device, a network blip.
final class DemoBackend: Sendable {

    /// A line for the timeline: which server.
    let title: String
    /// What the manager calls.
    let remote: any RemoteAuthService
    /// The password grant the user signs in with.
    let grant: AuthGrant
    /// The user name shown in the timeline.
    let userName: String

    private let kind: Kind

    private enum Kind: Sendable {
        case inProcess(InProcessAuthorizationServer)
        case real(RealServerLink)
    }

    /// The in-process server's one user.
    static let ada = ManagedUser(identifier: "ada", name: "Ada Lovelace", email: "ada@example.com")
    private static let adaPassword = "analytical engine"

    init(_ choice: BackendChoice) {
        switch choice {
        case .inProcess:
            // Rotation and reuse detection on, 20 ms of latency on the system clock.
            let server = InProcessAuthorizationServer(
                clock: SystemClock(),
                accessTokenLifetime: 3600,
                rotatesRefreshTokens: true,
                detectsReuse: true,
                latency: 0.020
            )
            server.register(Self.ada, password: Self.adaPassword)
            kind = .inProcess(server)
            remote = server
            grant = .password(username: Self.ada.identifier, password: Self.adaPassword)
            userName = Self.ada.identifier
            title = "in-process server (rotation, reuse detection, 20 ms latency)"
        case .real(let server):
            let link = RealServerLink(server)
            kind = .real(link)
            remote = link.service
            grant = .password(
                username: server.user.username,
                password: server.user.password,
                scope: ["openid", "read"]
            )
            userName = server.user.username
            title = "django-oauth-toolkit at \(server.issuer)"
        }
    }

    var isRealServer: Bool {
        if case .real = kind { return true }
        return false
    }

    /// Sign-ins (token requests with a password grant) the server has answered for this scenario.
    var signInCount: Int {
        switch kind {
        case .inProcess(let server): server.obtainCount
        case .real(let link): link.tokenRequests(grantType: "password").count
        }
    }

    /// Refresh requests the server has received for this scenario.
    var refreshCount: Int {
        switch kind {
        case .inProcess(let server): server.refreshCount
        case .real(let link): link.tokenRequests(grantType: "refresh_token").count
        }
    }

    /// Refresh tokens the server received more than once in this scenario.
    var refreshTokensPresentedTwice: Int {
        switch kind {
        case .inProcess(let server):
            server.duplicatePresentations.count
        case .real(let link):
            Dictionary(grouping: link.tokenRequests(grantType: "refresh_token").map(\.tokenHash), by: { $0 })
                .values.filter { $0.count > 1 }.count
        }
    }

    /// Ends every session of the user at the server, as a sign-out on another device would.
    ///
    /// - Parameter session: The session of this device (the real server revokes its refresh token,
    ///   which also ends its access token).
    /// - Returns: What was done, for the timeline.
    func revokeElsewhere(_ session: ManagedSession) async throws -> String {
        switch kind {
        case .inProcess(let server):
            server.revokeAllSessions(of: Self.ada.identifier)
            return "server.revokeAllSessions(of: \"\(Self.ada.identifier)\")"
        case .real(let link):
            guard let refreshToken = session.refreshToken else { throw DemoError("the session has no refresh token") }
            try await link.otherDevice.revoke(refreshToken, kind: .refreshToken)
            return "another OAuth2Service revokes the refresh token at /o/revoke_token/ (RFC 7009)"
        }
    }

    /// Makes the next `count` refreshes fail with a transient network error.
    ///
    /// - Returns: What the blip is, for the timeline.
    func injectBlip(failing count: Int) -> String {
        switch kind {
        case .inProcess(let server):
            server.enqueueRefreshFaults(Array(repeating: .unavailable, count: count))
            return "the server answers the next \(count) refreshes with HTTP 503 (fault .unavailable)"
        case .real(let link):
            link.transport.failNext(count)
            return
                "the network drops the next \(count) requests before they are sent (URLError -1009, not connected): "
                + "the real server cannot answer 503 on command"
        }
    }
}

/// The real server, the manager's `OAuth2Service` on it (through a transport that can drop
/// requests), another device's service, and the server's token-request log.
private struct RealServerLink: Sendable {
    let server: OAuthTestServer
    let service: OAuth2Service
    let otherDevice: OAuth2Service
    let transport: BlipTransport
    /// Log lines there were before the scenario: only later ones count.
    let logMark: Int

    init(_ server: OAuthTestServer) {
        self.server = server
        transport = BlipTransport(URLSessionTransport())
        service = OAuth2Service(configuration: Self.configuration(server), transport: transport)
        otherDevice = OAuth2Service(configuration: Self.configuration(server))
        logMark = Self.readLog(server).count
    }

    private static func configuration(_ server: OAuthTestServer) -> OAuth2Configuration {
        let client = server.clients["password"]
        let introspector = server.clients["introspector"].flatMap { client in
            client.clientSecret.map {
                OAuth2Client(id: client.clientId, authentication: .clientSecretBasic(secret: $0))
            }
        }
        return OAuth2Configuration(
            issuer: server.issuer,
            endpoints: OAuth2Endpoints(
                token: server.endpoints.token,
                revocation: server.endpoints.revoke,
                introspection: server.endpoints.introspect,
                userInfo: server.endpoints.userinfo
            ),
            client: OAuth2Client(
                id: client?.clientId ?? "",
                authentication: client?.clientSecret.map { .clientSecretBasic(secret: $0) } ?? .none
            ),
            introspectionClient: introspector,
            jwksURI: server.endpoints.jwks
        )
    }

    /// The token requests of the manager's client since the scenario began.
    func tokenRequests(grantType: String) -> [TokenRequest] {
        let clientID = server.clients["password"]?.clientId
        return Self.readLog(server).dropFirst(logMark).filter { $0.grantType == grantType && $0.clientID == clientID }
    }

    private static func readLog(_ server: OAuthTestServer) -> [TokenRequest] {
        let text = server.tokenRequestLog.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        return text.split(separator: "\n").compactMap { line in
            try? JSONDecoder().decode(TokenRequest.self, from: Data(line.utf8))
        }
    }
}

/// One line of the real server's token-request log.
private struct TokenRequest: Decodable {
    var grantType: String?
    var clientID: String?
    var tokenHash: String?

    private enum CodingKeys: String, CodingKey {
        case grantType = "grant_type"
        case clientID = "client_id"
        case tokenHash = "refresh_token_sha256"
    }
}

/// A transport that fails the next requests it is told to, as a network that drops them before
/// they are sent, and passes the others on.
private final class BlipTransport: OAuth2HTTPTransport {
    private let upstream: any OAuth2HTTPTransport
    private let failures = ConcurrencySafeContainer(0)

    init(_ upstream: any OAuth2HTTPTransport) {
        self.upstream = upstream
    }

    func failNext(_ count: Int) {
        failures.withLock { $0 = count }
    }

    func send(_ request: URLRequest, maximumResponseSize: Int) async throws(RemoteAuthError) -> OAuth2HTTPResponse {
        let fails = failures.withLock { remaining in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        if fails {
            throw RemoteAuthError(.network(code: -1009))
        }
        return try await upstream.send(request, maximumResponseSize: maximumResponseSize)
    }
}

/// A scenario step that could not be carried out.
struct DemoError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
