import Foundation

/// Metadata in JSON as the server writes it: RFC 8414's member names (`issuer`,
/// `token_endpoint`, `grant_types_supported`, ...), URLs as strings. A member that is absent
/// decodes as the initializer's default (`nil`, empty, `false`); one of the wrong type, or a URL
/// that does not parse, fails the decoding.
extension OAuth2ServerMetadata: Codable {

    private enum CodingKeys: String, CodingKey {
        case issuer
        case tokenEndpoint = "token_endpoint"
        case authorizationEndpoint = "authorization_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case userInfoEndpoint = "userinfo_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case jwksURI = "jwks_uri"
        case grantTypesSupported = "grant_types_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case scopesSupported = "scopes_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
    }

    /// Decodes metadata from RFC 8414's members; `issuer` and `token_endpoint` are required.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for a missing required member, a member of the wrong type, or a
    ///   URL that does not parse.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func url(_ key: CodingKeys) throws -> URL? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a URL")
            }
            return url
        }
        guard let tokenEndpoint = try url(.tokenEndpoint) else {
            throw DecodingError.keyNotFound(
                CodingKeys.tokenEndpoint,
                .init(codingPath: container.codingPath, debugDescription: "no token_endpoint")
            )
        }
        self.init(
            issuer: try container.decode(String.self, forKey: .issuer),
            tokenEndpoint: tokenEndpoint,
            authorizationEndpoint: try url(.authorizationEndpoint),
            revocationEndpoint: try url(.revocationEndpoint),
            introspectionEndpoint: try url(.introspectionEndpoint),
            userInfoEndpoint: try url(.userInfoEndpoint),
            deviceAuthorizationEndpoint: try url(.deviceAuthorizationEndpoint),
            jwksURI: try url(.jwksURI),
            grantTypesSupported: try container.decodeIfPresent([String].self, forKey: .grantTypesSupported) ?? [],
            codeChallengeMethodsSupported: try container.decodeIfPresent(
                [String].self,
                forKey: .codeChallengeMethodsSupported
            ) ?? [],
            scopesSupported: try container.decodeIfPresent([String].self, forKey: .scopesSupported) ?? [],
            authorizationResponseIssParameterSupported: try container.decodeIfPresent(
                Bool.self,
                forKey: .authorizationResponseIssParameterSupported
            ) ?? false
        )
    }

    /// Encodes the metadata with RFC 8414's member names; absent endpoints and empty lists are
    /// left out.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(tokenEndpoint.absoluteString, forKey: .tokenEndpoint)
        let endpoints: [(CodingKeys, URL?)] = [
            (.authorizationEndpoint, authorizationEndpoint), (.revocationEndpoint, revocationEndpoint),
            (.introspectionEndpoint, introspectionEndpoint), (.userInfoEndpoint, userInfoEndpoint),
            (.deviceAuthorizationEndpoint, deviceAuthorizationEndpoint), (.jwksURI, jwksURI),
        ]
        for (key, url) in endpoints {
            try container.encodeIfPresent(url?.absoluteString, forKey: key)
        }
        let lists: [(CodingKeys, [String])] = [
            (.grantTypesSupported, grantTypesSupported),
            (.codeChallengeMethodsSupported, codeChallengeMethodsSupported), (.scopesSupported, scopesSupported),
        ]
        for (key, values) in lists where !values.isEmpty {
            try container.encode(values, forKey: key)
        }
        if authorizationResponseIssParameterSupported {
            try container.encode(true, forKey: .authorizationResponseIssParameterSupported)
        }
    }
}
