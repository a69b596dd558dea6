import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as the stub received it: method, URL, headers, form fields.
struct SentRequest: Sendable {
    var method: String
    var url: URL
    var headers: [String: String]
    var body: Data

    /// The form fields of the body, decoded.
    var form: [String: String] {
        var components = URLComponents()
        components.percentEncodedQuery = String(decoding: body, as: UTF8.self)
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] {
            fields[item.name] = item.value ?? ""
        }
        return fields
    }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A transport that answers from a handler and records every request; it enforces the size
/// limit as the real one does.
///
/// All operations are thread-safe.
final class StubTransport: OAuth2HTTPTransport {

    typealias Handler = @Sendable (SentRequest) -> Result<OAuth2HTTPResponse, RemoteAuthError>

    private let state: ConcurrencySafeContainer<(handler: Handler, requests: [SentRequest])>

    init(_ handler: @escaping Handler) {
        state = ConcurrencySafeContainer((handler, []))
    }

    /// Answers every request with `response`.
    convenience init(_ response: OAuth2HTTPResponse) {
        self.init { _ in .success(response) }
    }

    var requests: [SentRequest] { state.withLock { $0.requests } }

    func answer(with handler: @escaping Handler) {
        state.withLock { $0.handler = handler }
    }

    /// The answer the handler gives `request`, without recording it: for a transport that
    /// delegates some paths to this one.
    func answer(_ request: SentRequest) -> Result<OAuth2HTTPResponse, RemoteAuthError> {
        state.withLock { $0.handler }(request)
    }

    func send(_ request: URLRequest, maximumResponseSize: Int) async throws(RemoteAuthError) -> OAuth2HTTPResponse {
        let sent = SentRequest(
            method: request.httpMethod ?? "GET",
            url: request.url!,
            headers: request.allHTTPHeaderFields ?? [:],
            body: request.httpBody ?? Data()
        )
        let handler = state.withLock { state in
            state.requests.append(sent)
            return state.handler
        }
        let response = try handler(sent).get()
        guard response.body.count <= maximumResponseSize else {
            throw RemoteAuthError(.responseTooLarge(limit: maximumResponseSize))
        }
        return response
    }
}

/// Answers and fixtures the tests share.
enum Fixture {
    static let issuer = "https://auth.example.com/o"
    static let clientID = "app-client"
    static let accessToken = "at-7Hq2LmZ9pX4vB8nR3sW6yK1dF5gJ0cTe"
    static let refreshToken = "rt-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcV"

    static let configuration = OAuth2Configuration(
        issuer: issuer,
        endpoints: OAuth2Endpoints(
            token: URL(string: "https://auth.example.com/o/token/")!,
            authorization: URL(string: "https://auth.example.com/o/authorize/")!,
            revocation: URL(string: "https://auth.example.com/o/revoke_token/")!,
            introspection: URL(string: "https://auth.example.com/o/introspect/")!,
            userInfo: URL(string: "https://auth.example.com/o/userinfo/")!,
            deviceAuthorization: URL(string: "https://auth.example.com/o/device-authorization/")!
        ),
        client: OAuth2Client(id: clientID),
        scope: ["openid", "profile"]
    )

    static func json(_ status: Int, _ text: String, headers: [String: String] = [:]) -> OAuth2HTTPResponse {
        var all = ["Content-Type": "application/json"]
        all.merge(headers) { _, new in new }
        return OAuth2HTTPResponse(statusCode: status, headers: all, body: Data(text.utf8))
    }

    static func tokenJSON(expiresIn: String = "3600", extra: String = "") -> String {
        """
        {"access_token": "\(accessToken)", "refresh_token": "\(refreshToken)", "token_type": "Bearer", \
        "expires_in": \(expiresIn)\(extra)}
        """
    }

    /// An unsigned-but-shaped ID token (`alg` RS256, signature bytes that nobody checks).
    static func idToken(_ claims: [String: Any]) -> String {
        func part(_ object: [String: Any]) -> String {
            let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return part(["alg": "RS256", "typ": "JWT"]) + "." + part(claims) + ".c2lnbmF0dXJl"
    }

    static func claims(now: Date, overrides: [String: Any] = [:]) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": issuer, "sub": "user-42", "aud": clientID, "exp": now.timeIntervalSince1970 + 300,
            "iat": now.timeIntervalSince1970, "name": "Ada Lovelace", "email": "ada@example.com",
            "preferred_username": "ada",
        ]
        for (key, value) in overrides {
            claims[key] = value
        }
        return claims
    }

    static func service(_ transport: StubTransport, clock: any AuthSessionClock = ManualClock()) -> OAuth2Service {
        OAuth2Service(configuration: configuration, transport: transport, clock: clock)
    }
}
