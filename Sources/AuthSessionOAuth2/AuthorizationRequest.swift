import AuthSessionProviders
import Foundation

/// One authorization-code request (RFC 6749 §4.1) with PKCE S256 (RFC 7636), and what it needs
/// to check the redirect that answers it.
///
/// Make one with ``OAuth2Service/authorizationRequest(redirectURI:scope:additionalParameters:)``,
/// open ``url`` in a browser (`ASWebAuthenticationSession` on Apple platforms), then pass the
/// redirect URL to ``grant(fromRedirect:)``: it checks `state` and returns the grant for
/// ``OAuth2Service/obtainTokens(with:)``, carrying the code verifier and the nonce. Keep the
/// request until then: ``codeVerifier`` is a secret, so ``description`` never shows it.
///
/// All operations are thread-safe.
public struct AuthorizationRequest: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The URL to open in the browser.
    public let url: URL

    /// The redirect URI the server sends the user back to.
    public let redirectURI: URL

    /// The `state` value the redirect must carry back.
    public let state: String

    /// The PKCE code verifier: 32 random bytes, base64url.
    public let codeVerifier: String

    /// The OpenID Connect `nonce` the ID token must carry, when `openid` is in the scope.
    public let nonce: String?

    /// Creates a request from its parts; ``OAuth2Service`` makes them for you.
    ///
    /// - Parameters:
    ///   - authorizationEndpoint: The authorization endpoint.
    ///   - clientID: The client identifier.
    ///   - redirectURI: The redirect URI.
    ///   - scope: The scopes.
    ///   - additionalParameters: More query parameters (`prompt`, `login_hint`, ...).
    /// - Returns: `nil` when the endpoint cannot carry a query.
    public init?(
        authorizationEndpoint: URL,
        clientID: String,
        redirectURI: URL,
        scope: [String],
        additionalParameters: [String: String] = [:]
    ) {
        let state = Self.randomToken()
        let codeVerifier = Self.randomToken()
        let nonce = scope.contains("openid") ? Self.randomToken() : nil
        guard var components = URLComponents(url: authorizationEndpoint, resolvingAgainstBaseURL: false) else {
            return nil
        }
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI.absoluteString),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "code_challenge", value: Self.challenge(for: codeVerifier)),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if !scope.isEmpty {
            items.append(URLQueryItem(name: "scope", value: scope.joined(separator: " ")))
        }
        if let nonce {
            items.append(URLQueryItem(name: "nonce", value: nonce))
        }
        items += additionalParameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        components.queryItems = items
        // `+` is legal in a query but many servers read it as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else { return nil }
        self.url = url
        self.redirectURI = redirectURI
        self.state = state
        self.codeVerifier = codeVerifier
        self.nonce = nonce
    }

    /// The S256 code challenge of `verifier`: base64url(SHA-256(ASCII(verifier))).
    ///
    /// - Parameter verifier: The code verifier.
    /// - Returns: The challenge.
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }

    /// Checks the redirect that answers this request and returns the grant to exchange.
    ///
    /// - Parameter redirect: The URL the browser was sent to.
    /// - Returns: The authorization-code grant, with the code verifier and the expected nonce.
    /// - Throws: ``AuthorizationRedirectError``: another redirect URI, a missing or different
    ///   `state` (checked before anything else in the query is trusted), the server's `error`,
    ///   or no `code`.
    public func grant(fromRedirect redirect: URL) throws(AuthorizationRedirectError) -> AuthGrant {
        guard let components = URLComponents(url: redirect, resolvingAgainstBaseURL: false),
            let expected = URLComponents(url: redirectURI, resolvingAgainstBaseURL: false),
            components.scheme?.lowercased() == expected.scheme?.lowercased(),
            components.host?.lowercased() == expected.host?.lowercased(),
            components.path == expected.path
        else {
            throw .redirectURIMismatch
        }
        let items = components.queryItems ?? []
        func value(_ name: String) -> String? {
            items.first { $0.name == name }?.value
        }
        guard let returnedState = value("state") else { throw .missingState }
        guard returnedState == state else { throw .stateMismatch }
        if let error = value("error") {
            throw .server(
                code: HTTPExchange.sanitizedCode(error),
                description: value("error_description").map(RemoteAuthError.sanitized)
            )
        }
        guard let code = value("code"), !code.isEmpty else { throw .missingCode }
        return .authorizationCode(code, codeVerifier: codeVerifier, redirectURI: redirectURI, nonce: nonce)
    }

    /// The authorization URL's endpoint and the redirect URI; never the verifier.
    public var description: String {
        "AuthorizationRequest(\(url.host ?? "")\(url.path) -> \(redirectURI.absoluteString))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the verifier, the state and the nonce.
    public var customMirror: Mirror {
        Mirror(self, children: ["redirectURI": redirectURI, "hasNonce": nonce != nil], displayStyle: .struct)
    }

    /// 32 random bytes from the system's secure generator, base64url: 43 characters.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

/// Why a redirect does not answer an ``AuthorizationRequest``.
///
/// All operations are thread-safe.
public enum AuthorizationRedirectError: Error, Sendable, Hashable, CustomStringConvertible {

    /// The redirect is not to the request's redirect URI.
    case redirectURIMismatch

    /// The redirect carries no `state`.
    case missingState

    /// The redirect's `state` is not the request's: possibly a forged redirect (CSRF).
    case stateMismatch

    /// The server answered with an error (`access_denied` when the user declined).
    case server(code: String, description: String?)

    /// The redirect carries no `code`.
    case missingCode

    /// What is wrong.
    public var description: String {
        switch self {
        case .redirectURIMismatch: return "the redirect is not to the request's redirect URI"
        case .missingState: return "the redirect carries no state"
        case .stateMismatch: return "the redirect's state is not the request's"
        case .server(let code, let description):
            // The redirect's text is the server's (or anyone's who crafted the URL): cleaned.
            return "the server answered \(RemoteAuthError.sanitized(code))"
                + (description.map { ": \(RemoteAuthError.sanitized($0))" } ?? "")
        case .missingCode: return "the redirect carries no code"
        }
    }
}

extension OAuth2Service {

    /// Makes an authorization-code request with PKCE S256, a fresh `state`, and a `nonce` when
    /// the scope includes `openid`.
    ///
    /// - Parameters:
    ///   - redirectURI: Where the server sends the user back.
    ///   - scope: The scopes; ``OAuth2Configuration/scope`` when `nil`.
    ///   - additionalParameters: More query parameters.
    /// - Returns: The request.
    /// - Throws: `RemoteAuthError` with `RemoteAuthError.Reason.unsupported(_:)` without an
    ///   authorization endpoint.
    public func authorizationRequest(
        redirectURI: URL,
        scope: [String]? = nil,
        additionalParameters: [String: String] = [:]
    ) throws(RemoteAuthError) -> AuthorizationRequest {
        guard let endpoint = configuration.endpoints.authorization,
            let request = AuthorizationRequest(
                authorizationEndpoint: endpoint,
                clientID: configuration.client.id,
                redirectURI: redirectURI,
                scope: scope ?? configuration.scope,
                additionalParameters: additionalParameters
            )
        else {
            throw RemoteAuthError(.unsupported("no usable authorization endpoint"))
        }
        try HTTPExchange.checkScheme(of: endpoint, allowsInsecureHTTP: configuration.allowsInsecureHTTP)
        return request
    }
}
