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
            fromRedirect: URL(string: "http://127.0.0.1/callback?code=abc123&state=\(state)")!
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
        // Form encoding, as servers write it: `+` is a space, `%2B` a plus.
        #expect(throws: AuthorizationRedirectError.server(code: "access_denied", description: "user said no + more")) {
            try request.grant(
                fromRedirect: URL(
                    string:
                        "http://127.0.0.1/callback?error=access_denied&error_description=user+said+no+%2B+more&state=\(state)"
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

    /// RFC 8252 §7.3 lets the server accept any port on a loopback redirect; the client checks
    /// that the answer reached the exact redirect URI it sent, port included.
    @Test func redirectToAnotherPortIsRefused() throws {
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(.init(statusCode: 500))
        )
        let request = try service.authorizationRequest(redirectURI: URL(string: "http://127.0.0.1:51234/callback")!)
        let state = request.state
        #expect(throws: AuthorizationRedirectError.redirectURIMismatch) {
            try request.grant(fromRedirect: URL(string: "http://127.0.0.1:4567/callback?code=abc&state=\(state)")!)
        }
        #expect(throws: AuthorizationRedirectError.redirectURIMismatch, "no port is not the port that was sent") {
            try request.grant(fromRedirect: URL(string: "http://127.0.0.1/callback?code=abc&state=\(state)")!)
        }
        _ = try request.grant(fromRedirect: URL(string: "http://127.0.0.1:51234/callback?code=abc&state=\(state)")!)

        // A default port written out is the same port.
        let https = try service.authorizationRequest(redirectURI: URL(string: "https://app.example/cb")!)
        _ = try https.grant(fromRedirect: URL(string: "https://app.example:443/cb?code=abc&state=\(https.state)")!)
        #expect(throws: AuthorizationRedirectError.redirectURIMismatch) {
            try https.grant(fromRedirect: URL(string: "https://app.example:8443/cb?code=abc&state=\(https.state)")!)
        }
    }

    /// RFC 6749 §3.1: a parameter must not appear twice; "the first of two" is whichever an
    /// attacker put first.
    @Test(arguments: ["state", "code", "iss", "error"])
    func aParameterTwiceIsRefused(name: String) throws {
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(.init(statusCode: 500))
        )
        let request = try service.authorizationRequest(redirectURI: URL(string: "http://127.0.0.1:8000/cb")!)
        var query = ["code=abc", "state=\(request.state)", "iss=\(Fixture.issuer)"]
        switch name {
        case "state": query.append("state=\(request.state)")
        case "code": query.append("code=other")
        case "iss": query.append("iss=\(Fixture.issuer)")
        default: query += ["error=access_denied", "error=server_error"]
        }
        let redirect = URL(string: "http://127.0.0.1:8000/cb?" + query.joined(separator: "&"))!
        #expect(throws: AuthorizationRedirectError.duplicateParameter(name)) {
            try request.grant(fromRedirect: redirect)
        }
    }

    /// RFC 9207: an `iss` that is present must be the issuer, advertised or not; when the server
    /// advertises it, it must be present. A mismatch is refused before the `error` is believed.
    @Test func issuerInTheRedirectIsChecked() throws {
        let redirectURI = URL(string: "http://127.0.0.1:8000/cb")!
        let plain = try OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(.init(statusCode: 500))
        )
        .authorizationRequest(redirectURI: redirectURI)
        #expect(plain.issuer == Fixture.issuer && !plain.requiresIssuer)
        func redirect(_ request: AuthorizationRequest, _ extra: String) -> URL {
            URL(string: "http://127.0.0.1:8000/cb?code=abc&state=\(request.state)" + extra)!
        }
        _ = try plain.grant(fromRedirect: redirect(plain, ""))
        _ = try plain.grant(fromRedirect: redirect(plain, "&iss=https%3A%2F%2Fauth.example.com%2Fo"))
        #expect(throws: AuthorizationRedirectError.issuerMismatch, "present, not advertised, and wrong") {
            try plain.grant(fromRedirect: redirect(plain, "&iss=https%3A%2F%2Fevil.example%2Fo"))
        }
        #expect(throws: AuthorizationRedirectError.issuerMismatch, "a simple string comparison") {
            try plain.grant(fromRedirect: redirect(plain, "&iss=https%3A%2F%2Fauth.example.com%2Fo%2F"))
        }

        var configuration = Fixture.configuration
        configuration.requiresIssuerInAuthorizationResponse = true
        let strict = try OAuth2Service(configuration: configuration, transport: StubTransport(.init(statusCode: 500)))
            .authorizationRequest(redirectURI: redirectURI)
        #expect(strict.requiresIssuer)
        #expect(throws: AuthorizationRedirectError.missingIssuer) {
            try strict.grant(fromRedirect: redirect(strict, ""))
        }
        #expect(throws: AuthorizationRedirectError.missingIssuer, "an error response without iss is not believed") {
            try strict.grant(
                fromRedirect: URL(string: "http://127.0.0.1:8000/cb?error=access_denied&state=\(strict.state)")!
            )
        }
        #expect(throws: AuthorizationRedirectError.issuerMismatch) {
            try strict.grant(fromRedirect: redirect(strict, "&iss=https%3A%2F%2Fevil.example%2Fo"))
        }
        let grant = try strict.grant(fromRedirect: redirect(strict, "&iss=https%3A%2F%2Fauth.example.com%2Fo"))
        #expect(grant.parameters["code"] == "abc")
    }

    /// The metadata's `authorization_response_iss_parameter_supported` reaches the request.
    @Test func advertisedIssuerParameterIsRequired() async throws {
        let document = #"""
            {"issuer": "https://a.example/o", "token_endpoint": "https://a.example/o/token/",
             "authorization_endpoint": "https://a.example/o/authorize/",
             "authorization_response_iss_parameter_supported": true}
            """#
        let transport = StubTransport { request in
            request.url.path == "/o/.well-known/openid-configuration"
                ? .success(Fixture.json(200, document)) : .success(OAuth2HTTPResponse(statusCode: 404))
        }
        let service = try await OAuth2Service.discover(
            issuer: URL(string: "https://a.example/o")!,
            client: OAuth2Client(id: "app"),
            transport: transport
        )
        #expect(service.configuration.requiresIssuerInAuthorizationResponse)
        let request = try service.authorizationRequest(redirectURI: URL(string: "http://127.0.0.1:8000/cb")!)
        #expect(throws: AuthorizationRedirectError.missingIssuer) {
            try request.grant(fromRedirect: URL(string: "http://127.0.0.1:8000/cb?code=abc&state=\(request.state)")!)
        }

        let silent = StubTransport { request in
            request.url.path == "/o/.well-known/openid-configuration"
                ? .success(
                    Fixture.json(
                        200,
                        document.replacingOccurrences(
                            of: "\"authorization_response_iss_parameter_supported\": true",
                            with: "\"scopes_supported\": []"
                        )
                    )
                ) : .success(OAuth2HTTPResponse(statusCode: 404))
        }
        let metadata = try await OAuth2ServerMetadata.discover(
            issuer: URL(string: "https://a.example/o")!,
            transport: silent
        )
        #expect(!metadata.authorizationResponseIssParameterSupported)
    }
}
