import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an authorization server says about itself (RFC 8414, OpenID Connect Discovery 1.0).
///
/// All operations are thread-safe.
public struct OAuth2ServerMetadata: Sendable, Hashable {

    /// The issuer identifier; ID tokens must carry it as `iss`.
    public var issuer: String

    /// The token endpoint.
    public var tokenEndpoint: URL

    /// The authorization endpoint, if the server has one.
    public var authorizationEndpoint: URL?

    /// The revocation endpoint (RFC 7009), if advertised.
    public var revocationEndpoint: URL?

    /// The introspection endpoint (RFC 7662), if advertised.
    public var introspectionEndpoint: URL?

    /// The userinfo endpoint, if advertised.
    public var userInfoEndpoint: URL?

    /// The device authorization endpoint (RFC 8628), if advertised.
    public var deviceAuthorizationEndpoint: URL?

    /// The JSON Web Key Set, if advertised (not used: signatures are not verified).
    public var jwksURI: URL?

    /// The grant types the server lists; empty when it lists none.
    public var grantTypesSupported: [String]

    /// The PKCE methods the server lists; empty when it lists none.
    public var codeChallengeMethodsSupported: [String]

    /// The scopes the server lists; empty when it lists none.
    public var scopesSupported: [String]

    /// Whether the server puts its issuer in every authorization response as `iss` (RFC 9207,
    /// `authorization_response_iss_parameter_supported`); `false` when it does not say. When
    /// `true`, a redirect without `iss` is refused (see ``AuthorizationRequest/grant(fromRedirect:)``).
    public var authorizationResponseIssParameterSupported: Bool

    /// Creates metadata.
    ///
    /// - Parameters:
    ///   - issuer: The issuer identifier.
    ///   - tokenEndpoint: The token endpoint.
    ///   - authorizationEndpoint: The authorization endpoint.
    ///   - revocationEndpoint: The revocation endpoint.
    ///   - introspectionEndpoint: The introspection endpoint.
    ///   - userInfoEndpoint: The userinfo endpoint.
    ///   - deviceAuthorizationEndpoint: The device authorization endpoint.
    ///   - jwksURI: The key set.
    ///   - grantTypesSupported: The grant types listed.
    ///   - codeChallengeMethodsSupported: The PKCE methods listed.
    ///   - scopesSupported: The scopes listed.
    ///   - authorizationResponseIssParameterSupported: Whether authorization responses carry `iss`.
    public init(
        issuer: String,
        tokenEndpoint: URL,
        authorizationEndpoint: URL? = nil,
        revocationEndpoint: URL? = nil,
        introspectionEndpoint: URL? = nil,
        userInfoEndpoint: URL? = nil,
        deviceAuthorizationEndpoint: URL? = nil,
        jwksURI: URL? = nil,
        grantTypesSupported: [String] = [],
        codeChallengeMethodsSupported: [String] = [],
        scopesSupported: [String] = [],
        authorizationResponseIssParameterSupported: Bool = false
    ) {
        self.issuer = issuer
        self.tokenEndpoint = tokenEndpoint
        self.authorizationEndpoint = authorizationEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.introspectionEndpoint = introspectionEndpoint
        self.userInfoEndpoint = userInfoEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.jwksURI = jwksURI
        self.grantTypesSupported = grantTypesSupported
        self.codeChallengeMethodsSupported = codeChallengeMethodsSupported
        self.scopesSupported = scopesSupported
        self.authorizationResponseIssParameterSupported = authorizationResponseIssParameterSupported
    }

    /// The metadata URLs tried for `issuer`, in order: RFC 8414's (the well-known path inserted
    /// before the issuer's path), OpenID Connect's (appended), and the appended RFC 8414 form
    /// some servers use.
    ///
    /// - Parameter issuer: The issuer URL.
    /// - Returns: The URLs, without duplicates.
    public static func metadataURLs(for issuer: URL) -> [URL] {
        guard var components = URLComponents(url: issuer, resolvingAgainstBaseURL: false) else { return [] }
        var path = components.path
        while path.hasSuffix("/") {
            path.removeLast()
        }
        components.query = nil
        components.fragment = nil
        var urls: [URL] = []
        for candidate in [
            "/.well-known/oauth-authorization-server" + path,
            path + "/.well-known/openid-configuration",
            path + "/.well-known/oauth-authorization-server",
        ] {
            components.path = candidate
            if let url = components.url, !urls.contains(url) {
                urls.append(url)
            }
        }
        return urls
    }

    /// Fetches and merges the server's metadata documents.
    ///
    /// Every URL of ``metadataURLs(for:)`` is asked; one that is missing or broken (a 404, a 403,
    /// an HTML page) is skipped while another answers. A network failure, a timeout or a 5xx at
    /// any of them is thrown (transient): the document may exist, and metadata without it could
    /// lack an endpoint. Fields come from the first document that has them, RFC 8414's first. Each document's `issuer` must equal `issuer` (RFC 8414
    /// §3.3; a trailing slash aside), or discovery fails. Discovery never throws a terminal
    /// error: with no document, the error is transient when a failure was, else
    /// misconfiguration.
    ///
    /// - Parameters:
    ///   - issuer: The issuer URL.
    ///   - transport: The transport; a ``URLSessionTransport`` by default.
    ///   - timeout: The request timeout, in seconds.
    ///   - allowsInsecureHTTP: Whether plain `http` is allowed for hosts other than loopback.
    /// - Returns: The merged metadata.
    /// - Throws: `RemoteAuthError`: misconfiguration when no document exists, an issuer differs
    ///   or the token endpoint is missing; transient for the network.
    public static func discover(
        issuer: URL,
        transport: any OAuth2HTTPTransport = URLSessionTransport(),
        timeout: TimeInterval = 30,
        allowsInsecureHTTP: Bool = false
    ) async throws(RemoteAuthError) -> OAuth2ServerMetadata {
        var documents: [[String: JSONValue]] = []
        var failures: [RemoteAuthError] = []
        for url in metadataURLs(for: issuer) {
            try HTTPExchange.checkScheme(of: url, allowsInsecureHTTP: allowsInsecureHTTP)
            var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            let document: [String: JSONValue]
            do {
                document = try HTTPExchange.jsonObject(
                    from: try await transport.send(request, maximumResponseSize: 256 * 1024)
                )
            } catch  where error.reason == .cancelled {
                throw error
            } catch  where Self.leavesTheDocumentUnknown(error) {
                // The document may exist: returning without it could drop an endpoint it lists.
                throw error
            } catch {
                // A missing or broken document is skipped while another one answers.
                failures.append(error)
                continue
            }
            guard let documentIssuer = document["issuer"]?.stringValue,
                normalized(documentIssuer) == normalized(issuer.absoluteString)
            else {
                throw RemoteAuthError(.unsupported("metadata at \(url.path) names another issuer"))
            }
            documents.append(document)
        }
        guard !documents.isEmpty else {
            // Nothing to sign a user out for here: a failure is transient or a setup problem.
            if let transient = failures.first(where: { $0.isRetryable }) { throw transient }
            throw RemoteAuthError(.unsupported("no metadata document at the issuer"))
        }
        func url(_ name: String) -> URL? {
            documents.lazy.compactMap { $0[name]?.stringValue.flatMap(URL.init(string:)) }.first
        }
        func strings(_ name: String) -> [String] {
            documents.lazy.compactMap { document -> [String]? in
                guard case .array(let values)? = document[name] else { return nil }
                return values.compactMap(\.stringValue)
            }.first ?? []
        }
        guard let tokenEndpoint = url("token_endpoint") else {
            throw RemoteAuthError(.invalidResponse("metadata has no token_endpoint"))
        }
        return OAuth2ServerMetadata(
            issuer: documents[0]["issuer"]?.stringValue ?? issuer.absoluteString,
            tokenEndpoint: tokenEndpoint,
            authorizationEndpoint: url("authorization_endpoint"),
            revocationEndpoint: url("revocation_endpoint"),
            introspectionEndpoint: url("introspection_endpoint"),
            userInfoEndpoint: url("userinfo_endpoint"),
            deviceAuthorizationEndpoint: url("device_authorization_endpoint"),
            jwksURI: url("jwks_uri"),
            grantTypesSupported: strings("grant_types_supported"),
            codeChallengeMethodsSupported: strings("code_challenge_methods_supported"),
            scopesSupported: strings("scopes_supported"),
            authorizationResponseIssParameterSupported: documents.lazy.compactMap {
                $0["authorization_response_iss_parameter_supported"]?.boolValue
            }.first ?? false
        )
    }

    /// A failure that says nothing about whether the document exists: the network, a timeout,
    /// or a 5xx.
    private static func leavesTheDocumentUnknown(_ error: RemoteAuthError) -> Bool {
        switch error.reason {
        case .network, .timedOut: return true
        default: return (error.statusCode ?? 0) >= 500
        }
    }

    static func normalized(_ issuer: String) -> String {
        issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
    }
}
