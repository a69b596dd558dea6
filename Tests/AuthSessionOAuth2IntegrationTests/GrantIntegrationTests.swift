import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every grant against the real server: tokens come back, and what they carry is checked.
extension RealServerTests {
    @Suite struct GrantIntegrationTests {

        @Test func passwordGrantWithEachClientAuthentication() async throws {
            let server = try RealServer.require()
            let secret = try #require(server.clients["password"]?.clientSecret)
            for method in [
                OAuth2Client.Authentication.clientSecretBasic(secret: secret), .clientSecretPost(secret: secret),
            ] {
                let service = try RealServer.service(role: "password", authentication: method)
                let tokens = try await RealServer.signIn(service, scope: ["openid", "profile", "email", "read"])
                #expect(!tokens.accessToken.isEmpty && tokens.refreshToken != nil)
                #expect(tokens.expiresIn == 60)
                // django-oauth-toolkit's password grant issues no ID token (the user comes from
                // userinfo); Glewlwyd's does (the user comes from its claims).
                #expect((tokens.idToken != nil) == (server.kind == .glewlwyd))
                #expect(tokens.user?.email == server.user.email)
                #expect(tokens.scope?.sorted() == ["email", "openid", "profile", "read"])
            }
            // Glewlwyd refuses a public client that names itself the password grant (403).
            guard server.kind == .djangoOAuthToolkit else { return }
            let publicService = try RealServer.service(role: "passwordPublic")
            let tokens = try await RealServer.signIn(publicService)
            #expect(tokens.refreshToken != nil)
            #expect(tokens.scope == ["read"])
        }

        @Test func clientCredentialsGrantHasNoRefreshToken() async throws {
            // Glewlwyd grants no default scope: it refuses a request that names none.
            let service = try RealServer.service(
                role: "clientCredentials",
                scope: RealServer.kind == .glewlwyd ? ["read"] : []
            )
            let tokens = try await service.obtainTokens(with: .clientCredentials)
            #expect(!tokens.accessToken.isEmpty)
            #expect(tokens.refreshToken == nil)
            #expect(tokens.user == nil)
        }

        @Test func authorizationCodeWithPKCEAndACheckedIDToken() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "authorizationCode", scope: ["openid", "profile", "email"])
            let browser = ScriptedBrowser(server: server)
            try await browser.signIn()
            let request = try service.authorizationRequest(redirectURI: URL(string: "http://127.0.0.1:8123/callback")!)
            let redirect = try await browser.redirect(from: request.url)
            let grant = try request.grant(fromRedirect: redirect)
            let tokens = try await service.obtainTokens(with: grant)
            let idToken = try #require(tokens.idToken, "the code flow with openid returns an ID token")
            let claims = try IDTokenClaims(parsing: idToken)
            #expect(claims.nonce == request.nonce)
            #expect(claims.issuer == server.issuer)
            #expect(tokens.user?.email == server.user.email)
            #expect(tokens.user?.name == "Test User")

            // The code is single-use: presenting it again is the end of that grant.
            let replay = await #expect(throws: RemoteAuthError.self) { try await service.obtainTokens(with: grant) }
            if server.kind == .glewlwyd {
                // Glewlwyd's own code for it, `invalid_code` with a 403: not a standard code, so
                // the client can only call it a misconfiguration (a sign-in fails either way).
                #expect(replay?.serverCode == "invalid_code")
                #expect(replay?.statusCode == 403)
            } else {
                #expect(replay?.serverCode == "invalid_grant")
                #expect(replay?.kind == .terminal)
            }

            // A forged redirect never reaches the token endpoint.
            let forged = redirect.absoluteString.replacingOccurrences(
                of: "state=\(request.state)",
                with: "state=forged"
            )
            #expect(throws: AuthorizationRedirectError.stateMismatch) {
                try request.grant(fromRedirect: URL(string: forged)!)
            }
        }

        @Test func wrongVerifierIsRefused() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "authorizationCode", scope: ["read"])
            let browser = ScriptedBrowser(server: server)
            try await browser.signIn()
            let request = try service.authorizationRequest(redirectURI: URL(string: "http://127.0.0.1/callback")!)
            var grant = try request.grant(fromRedirect: try await browser.redirect(from: request.url))
            grant.parameters["code_verifier"] = String(repeating: "v", count: 43)
            let error = await #expect(throws: RemoteAuthError.self) { try await service.obtainTokens(with: grant) }
            #expect(error?.serverCode == (server.kind == .glewlwyd ? "invalid_code" : "invalid_grant"))
        }

        @Test func deviceFlowApprovedDeniedAndExpired() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "device", scope: ["openid", "read"])
            let browser = ScriptedBrowser(server: server)
            try await browser.signIn()

            let approved = try await service.startDeviceAuthorization()
            #expect(approved.verificationURI.absoluteString.hasPrefix(server.baseURL.absoluteString))
            let polling = Task { try await service.pollDeviceAuthorization(approved) }
            try await browser.decide(userCode: approved.userCode)
            let tokens = try await polling.value
            #expect(tokens.refreshToken != nil)
            guard server.kind == .djangoOAuthToolkit else {
                // Glewlwyd's device grant carries an ID token; it has no refusal of a device code
                // that reaches the client, and no expiry on demand.
                #expect(tokens.idToken != nil && tokens.user?.identifier.isEmpty == false)
                return
            }
            #expect(tokens.user?.identifier == "1", "no ID token from this grant: the user came from userinfo")

            let denied = try await service.startDeviceAuthorization()
            try await browser.decide(userCode: denied.userCode, accept: false)
            let refusal = await #expect(throws: RemoteAuthError.self) {
                try await service.pollDeviceAuthorization(denied)
            }
            #expect(refusal?.serverCode == "access_denied")
            #expect(refusal?.kind == .terminal)

            let expiring = try await service.startDeviceAuthorization()
            try ServerScript.run(["expire-device-code", expiring.userCode])
            let expiry = await #expect(throws: RemoteAuthError.self) {
                try await service.pollDeviceAuthorization(expiring)
            }
            #expect(expiry?.serverCode == "expired_token")
            #expect(expiry?.kind == .terminal)
        }

        @Test func discoveryFindsEveryEndpointAndTheServiceWorks() async throws {
            let server = try RealServer.require()
            let metadata = try await OAuth2ServerMetadata.discover(issuer: URL(string: server.issuer)!)
            #expect(metadata.issuer == server.issuer)
            #expect(metadata.tokenEndpoint == server.endpoints.token)
            #expect(metadata.authorizationEndpoint == server.endpoints.authorize)
            #expect(metadata.revocationEndpoint == server.endpoints.revoke)
            #expect(metadata.introspectionEndpoint == server.endpoints.introspect)
            #expect(metadata.userInfoEndpoint == server.endpoints.userinfo)
            #expect(metadata.codeChallengeMethodsSupported.contains("S256"))

            let client = try #require(server.clients["password"])
            let service = try await OAuth2Service.discover(
                issuer: URL(string: server.issuer)!,
                client: OAuth2Client(
                    id: client.clientId,
                    authentication: .clientSecretBasic(secret: client.clientSecret!)
                ),
                scope: ["openid", "read"]
            )
            let tokens = try await RealServer.signIn(service)
            // An ID token with the refresh (django-oauth-toolkit) or with the sign-in (Glewlwyd).
            let refreshed = try await service.refresh(try #require(tokens.refreshToken), scope: nil)
            #expect((refreshed.idToken ?? tokens.idToken) != nil)
        }
    }
}
