import AuthSessionProviders
import Foundation

/// One authorization-code request (RFC 6749 §4.1) with PKCE S256 (RFC 7636), and what it needs
/// to check the redirect that answers it.
///
/// Make one with ``OAuth2Service/authorizationRequest(redirectURI:scope:additionalParameters:)``,
/// open ``url`` in a browser (`ASWebAuthenticationSession` on Apple platforms), then pass the
/// redirect URL to ``grant(fromRedirect:)``: it checks the redirect URI, `state` and `iss` (RFC
/// 9207) and returns the grant for ``OAuth2Service/obtainTokens(with:)``, carrying the code
/// verifier and the nonce. Keep the request until then: ``codeVerifier`` is a secret, so
/// ``description`` never shows it. For a command-line or desktop app, ``LoopbackRedirectListener``
/// receives the redirect.
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

    /// The issuer an `iss` in the redirect must equal (RFC 9207), or `nil` to accept any `iss`
    /// (a configuration without an issuer has nothing to compare it with).
    public let issuer: String?

    /// Whether the redirect must carry `iss`: the server's metadata says it always sends it
    /// (`authorization_response_iss_parameter_supported`). A redirect without it is refused.
    public let requiresIssuer: Bool

    /// Creates a request from its parts; ``OAuth2Service`` makes them for you.
    ///
    /// - Parameters:
    ///   - authorizationEndpoint: The authorization endpoint.
    ///   - clientID: The client identifier.
    ///   - redirectURI: The redirect URI.
    ///   - scope: The scopes.
    ///   - additionalParameters: More query parameters (`prompt`, `login_hint`, ...).
    ///   - issuer: The issuer an `iss` in the redirect must equal; `nil` accepts any.
    ///   - requiresIssuer: Whether the redirect must carry `iss` (RFC 9207).
    /// - Returns: `nil` when the endpoint cannot carry a query.
    public init?(
        authorizationEndpoint: URL,
        clientID: String,
        redirectURI: URL,
        scope: [String],
        additionalParameters: [String: String] = [:],
        issuer: String? = nil,
        requiresIssuer: Bool = false
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
        self.issuer = issuer
        self.requiresIssuer = requiresIssuer
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
    /// In this order, each before anything later in the query is trusted:
    ///
    /// 1. The redirect is to ``redirectURI``: the same scheme, host, **port** and path (RFC 8252
    ///    §7.3 lets the server accept any port on a loopback redirect; the client still checks
    ///    that the answer reached the one it sent).
    /// 2. `state` appears exactly once and equals ``state``.
    /// 3. No response parameter (`code`, `iss`, `error`, `error_description`, `error_uri`)
    ///    appears twice: RFC 6749 §3.1 forbids it, and reading "the first" of two is reading
    ///    whichever an attacker placed first.
    /// 4. `iss` (RFC 9207 §2.4): when present, it must equal ``issuer`` (a simple string
    ///    comparison), whether or not the server advertised it; when absent, the redirect is
    ///    refused if ``requiresIssuer``. Checked before the server's `error` is believed.
    /// 5. The server's `error`, then `code`.
    ///
    /// - Parameter redirect: The URL the browser was sent to.
    /// - Returns: The authorization-code grant, with the code verifier and the expected nonce.
    /// - Throws: ``AuthorizationRedirectError``; nothing has been exchanged.
    public func grant(fromRedirect redirect: URL) throws(AuthorizationRedirectError) -> AuthGrant {
        try grantFromRedirect(redirect)
    }

    /// A form-encoded component read: `+` a space, percent escapes decoded (kept as they are
    /// when they are not valid UTF-8).
    static func formDecoded(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    private func grantFromRedirect(_ redirect: URL) throws(AuthorizationRedirectError) -> AuthGrant {
        guard let components = URLComponents(url: redirect, resolvingAgainstBaseURL: false), isRedirectURI(redirect)
        else {
            throw .redirectURIMismatch
        }
        // The query is form-encoded (RFC 6749 section 4.1.2, appendix B): `+` is a space.
        let items = (components.percentEncodedQueryItems ?? []).map { item in
            (name: Self.formDecoded(item.name), value: item.value.map(Self.formDecoded))
        }
        func values(_ name: String) -> [String] {
            items.filter { $0.name == name }.map { $0.value ?? "" }
        }
        let states = values("state")
        guard states.count <= 1 else { throw .duplicateParameter("state") }
        guard let returnedState = states.first else { throw .missingState }
        guard returnedState == state else { throw .stateMismatch }
        for name in ["code", "iss", "error", "error_description", "error_uri"] where values(name).count > 1 {
            throw .duplicateParameter(name)
        }
        if let returnedIssuer = values("iss").first {
            if let issuer, returnedIssuer != issuer { throw .issuerMismatch }
        } else if requiresIssuer {
            throw .missingIssuer
        }
        if let error = values("error").first {
            throw .server(
                code: HTTPExchange.sanitizedCode(error),
                description: values("error_description").first.map(RemoteAuthError.sanitized)
            )
        }
        guard let code = values("code").first, !code.isEmpty else { throw .missingCode }
        return .authorizationCode(code, codeVerifier: codeVerifier, redirectURI: redirectURI, nonce: nonce)
    }

    /// The port a URL's components name, or its scheme's default (80 for `http`, 443 for `https`).
    static func effectivePort(of components: URLComponents) -> Int? {
        if let port = components.port { return port }
        switch components.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// The authorization URL's endpoint and the redirect URI; never the verifier.
    public var description: String {
        "AuthorizationRequest(\(url.host ?? "")\(url.path) -> \(redirectURI.absoluteString))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the verifier, the state and the nonce.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["redirectURI": redirectURI, "hasNonce": nonce != nil, "issuer": issuer as Any],
            displayStyle: .struct
        )
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

    /// A response parameter (`state`, `code`, `iss`, `error`, ...) appears more than once: the
    /// redirect is ambiguous and none of its values is used.
    case duplicateParameter(String)

    /// The redirect's `iss` is not the issuer of the server the request was sent to (RFC 9207): a
    /// mix-up attack, or a redirect from another server.
    case issuerMismatch

    /// The server says it always sends `iss` (RFC 9207), and this redirect has none.
    case missingIssuer

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
        case .duplicateParameter(let name): return "the redirect carries \(name) more than once"
        case .issuerMismatch: return "the redirect's iss is not the server's issuer (RFC 9207)"
        case .missingIssuer: return "the redirect carries no iss, which the server promised (RFC 9207)"
        }
    }
}

extension OAuth2Service {

    /// Makes an authorization-code request with PKCE S256, a fresh `state`, and a `nonce` when
    /// the scope includes `openid`. Its redirect check compares `iss` with
    /// ``OAuth2Configuration/issuer`` and requires it when
    /// ``OAuth2Configuration/requiresIssuerInAuthorizationResponse``.
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
                additionalParameters: additionalParameters,
                issuer: configuration.issuer,
                requiresIssuer: configuration.requiresIssuerInAuthorizationResponse
            )
        else {
            throw RemoteAuthError(.unsupported("no usable authorization endpoint"))
        }
        try HTTPExchange.checkScheme(of: endpoint, allowsInsecureHTTP: configuration.allowsInsecureHTTP)
        return request
    }
}

extension AuthorizationRedirectError: SessionEndingError {

    /// `false`: a sign-in's redirect that cannot be used leaves the session there was, if any.
    public var endsSession: Bool { false }
}
