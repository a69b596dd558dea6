import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// PKCE S256, `state`, `nonce`, and the redirect check.
@Suite struct AuthorizationCodeTests {

    /// RFC 7636 Appendix B.
    @Test func challengeMatchesTheRFCExample() {
        #expect(
            AuthorizationRequest.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
                == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        )
    }

    /// FIPS 180-4 test vectors, and the padding boundaries (55, 56, 63, 64 bytes; digests from Python's hashlib).
    @Test(arguments: [
        ("", "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"),
        ("abc", "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "JI1qYdIGOLjlwCaTDD5gOaM85Flk_yFn9uzt1BnbBsE"),
        (String(repeating: "a", count: 55), "n0OQ-NMMLdkuyfCVtl4rmumwqSWlJY4kHJ8ekQ9zQxg"),
        (String(repeating: "a", count: 56), "s1Q5pKxvCUi21vnjxq8PX1kM4g8b3nCQ73lwaG7Gc4o"),
        (String(repeating: "a", count: 63), "fT50oF19sVvOStnsBljqmOPwbu7PFrTG__LaRX3cLzQ"),
        (String(repeating: "a", count: 64), "_-BU_nrgy23GXDr5th1SCfQ5hR20PQulmXM33xVGaOs"),
    ])
    func sha256Vectors(message: String, digest: String) {
        #expect(AuthorizationRequest.challenge(for: message) == digest)
    }

    @Test func requestCarriesPKCEStateAndNonce() throws {
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(OAuth2HTTPResponse(statusCode: 500))
        )
        let request = try service.authorizationRequest(
            redirectURI: URL(string: "http://127.0.0.1/callback")!,
            additionalParameters: ["prompt": "login"]
        )
        let items = Dictionary(
            uniqueKeysWithValues: (URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? [])
                .map { ($0.name, $0.value ?? "") }
        )
        #expect(items["response_type"] == "code")
        #expect(items["client_id"] == Fixture.clientID)
        #expect(items["redirect_uri"] == "http://127.0.0.1/callback")
        #expect(items["code_challenge_method"] == "S256")
        #expect(items["code_challenge"] == AuthorizationRequest.challenge(for: request.codeVerifier))
        #expect(items["state"] == request.state)
        #expect(items["nonce"] == request.nonce && request.nonce != nil)
        #expect(items["scope"] == "openid profile")
        #expect(items["prompt"] == "login")
        #expect(request.codeVerifier.count == 43)
        #expect(!request.description.contains(request.codeVerifier))

        let other = try service.authorizationRequest(
            redirectURI: URL(string: "http://127.0.0.1/callback")!,
            scope: ["read"]
        )
        #expect(other.state != request.state && other.codeVerifier != request.codeVerifier)
        #expect(other.nonce == nil, "no openid, no nonce")
    }

    @Test func redirectIsCheckedBeforeItIsTrusted() throws {
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(OAuth2HTTPResponse(statusCode: 500))
        )
        let request = try service.authorizationRequest(redirectURI: URL(string: "http://127.0.0.1/callback")!)
        let state = request.state

        let grant = try request.grant(
            fromRedirect: URL(string: "http://127.0.0.1:4567/callback?code=abc123&state=\(state)")!
        )
        #expect(grant.grantType == "authorization_code")
        #expect(
            grant.parameters == [
                "code": "abc123", "code_verifier": request.codeVerifier,
                "redirect_uri": "http://127.0.0.1/callback",
            ]
        )
        #expect(grant.expectedNonce == request.nonce)

        #expect(throws: AuthorizationRedirectError.stateMismatch) {
            try request.grant(fromRedirect: URL(string: "http://127.0.0.1/callback?code=abc&state=forged")!)
        }
        #expect(throws: AuthorizationRedirectError.missingState) {
            try request.grant(fromRedirect: URL(string: "http://127.0.0.1/callback?code=abc")!)
        }
        #expect(throws: AuthorizationRedirectError.redirectURIMismatch) {
            try request.grant(fromRedirect: URL(string: "http://evil.example/callback?code=abc&state=\(state)")!)
        }
        #expect(throws: AuthorizationRedirectError.missingCode) {
            try request.grant(fromRedirect: URL(string: "http://127.0.0.1/callback?state=\(state)")!)
        }
        #expect(throws: AuthorizationRedirectError.server(code: "access_denied", description: "user said no")) {
            try request.grant(
                fromRedirect: URL(
                    string:
                        "http://127.0.0.1/callback?error=access_denied&error_description=user%20said%20no&state=\(state)"
                )!
            )
        }
        #expect(
            throws: AuthorizationRedirectError.stateMismatch,
            "an error redirect with a forged state is not believed"
        ) {
            try request.grant(fromRedirect: URL(string: "http://127.0.0.1/callback?error=access_denied&state=forged")!)
        }
    }
}
