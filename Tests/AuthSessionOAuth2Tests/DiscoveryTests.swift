import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

@Suite struct DiscoveryTests {

    @Test func metadataURLsFollowBothSpecifications() {
        #expect(
            OAuth2ServerMetadata.metadataURLs(for: URL(string: "https://a.example/o/")!).map(\.absoluteString) == [
                "https://a.example/.well-known/oauth-authorization-server/o",
                "https://a.example/o/.well-known/openid-configuration",
                "https://a.example/o/.well-known/oauth-authorization-server",
            ]
        )
        #expect(
            OAuth2ServerMetadata.metadataURLs(for: URL(string: "https://a.example")!).map(\.absoluteString) == [
                "https://a.example/.well-known/oauth-authorization-server",
                "https://a.example/.well-known/openid-configuration",
            ]
        )
    }

    private static let oauthDocument = #"""
        {"issuer": "https://a.example/o", "token_endpoint": "https://a.example/o/token/",
         "revocation_endpoint": "https://a.example/o/revoke/", "introspection_endpoint": "https://a.example/o/introspect/",
         "grant_types_supported": ["authorization_code", "refresh_token"]}
        """#
    private static let openIDDocument = #"""
        {"issuer": "https://a.example/o", "token_endpoint": "https://a.example/o/token/",
         "authorization_endpoint": "https://a.example/o/authorize/", "userinfo_endpoint": "https://a.example/o/userinfo/",
         "code_challenge_methods_supported": ["S256"], "scopes_supported": ["openid", "email"]}
        """#

    @Test func documentsAreMergedAndMissingOnesSkipped() async throws {
        let transport = StubTransport { request in
            switch request.url.path {
            case "/o/.well-known/openid-configuration": return .success(Fixture.json(200, Self.openIDDocument))
            case "/o/.well-known/oauth-authorization-server": return .success(Fixture.json(200, Self.oauthDocument))
            default: return .success(OAuth2HTTPResponse(statusCode: 404))
            }
        }
        let metadata = try await OAuth2ServerMetadata.discover(
            issuer: URL(string: "https://a.example/o")!,
            transport: transport
        )
        #expect(metadata.issuer == "https://a.example/o")
        #expect(metadata.tokenEndpoint.absoluteString == "https://a.example/o/token/")
        #expect(metadata.authorizationEndpoint?.absoluteString == "https://a.example/o/authorize/")
        #expect(metadata.revocationEndpoint?.absoluteString == "https://a.example/o/revoke/")
        #expect(metadata.introspectionEndpoint?.absoluteString == "https://a.example/o/introspect/")
        #expect(metadata.userInfoEndpoint?.absoluteString == "https://a.example/o/userinfo/")
        #expect(metadata.codeChallengeMethodsSupported == ["S256"])
        #expect(metadata.grantTypesSupported == ["authorization_code", "refresh_token"])
        #expect(transport.requests.count == 3)
    }

    @Test func anotherIssuerIsRefused() async throws {
        let transport = StubTransport(
            Fixture.json(
                200,
                Self.openIDDocument.replacingOccurrences(
                    of: "\"issuer\": \"https://a.example/o\"",
                    with: "\"issuer\": \"https://evil.example/o\""
                )
            )
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.kind == .misconfiguration)
    }

    @Test func noDocumentAtAllIsMisconfiguration() async throws {
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 404))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.kind == .misconfiguration)
    }

    @Test func outageDuringDiscoveryIsTransient() async throws {
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 503, headers: ["Retry-After": "5"]))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.kind == .transient)
        #expect(error?.retryAfter == .seconds(5))
    }

    /// A 5xx is transient whatever its body says: an app told to sign out on a terminal error
    /// must not sign out because discovery met a failing server (or proxy) that put a terminal
    /// code in its error page.
    @Test(arguments: ["invalid_grant", "invalid_token", "access_denied", "expired_token", "invalid_client"])
    func aFailingServerIsTransientWhateverItsBodySays(code: String) async throws {
        let transport = StubTransport(Fixture.json(503, #"{"error": "\#(code)"}"#, headers: ["Retry-After": "7"]))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.kind == .transient)
        #expect(error?.isRetryable == true)
        #expect(error?.reason == .httpStatus(503))
        #expect(error?.retryAfter == .seconds(7))
    }
}
