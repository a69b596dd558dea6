import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SHA-256 of a token as the server's log writes it (lowercase hex).
func logDigest(_ token: String) -> String {
    SHA256.hash(Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
}

/// Refresh, rotation, reuse, revocation, introspection, userinfo and credential state.
extension RealServerTests {
    @Suite struct TokenLifecycleIntegrationTests {

        @Test func refreshRotatesAndTheOldAccessTokenDies() async throws {
            let service = try RealServer.service(role: "password", scope: ["openid", "profile", "email", "read"])
            let first = try await RealServer.signIn(service)
            let second = try await service.refresh(try #require(first.refreshToken), scope: nil)
            #expect(second.refreshToken != first.refreshToken)
            #expect(second.accessToken != first.accessToken)
            // django-oauth-toolkit ends the old access token with the rotation; Glewlwyd lets it
            // live to its expiry (a difference the client does not depend on).
            #expect(
                try await service.introspect(first.accessToken, kind: .accessToken).isActive
                    == (RealServer.kind == .glewlwyd)
            )
            let live = try await service.introspect(second.accessToken, kind: .accessToken)
            #expect(live.isActive)
            #expect(live.username == (try RealServer.require()).user.username)

            guard RealServer.kind == .djangoOAuthToolkit else {
                // Glewlwyd answers a refresh without an ID token, and keeps no token-request log.
                #expect(second.idToken == nil)
                return
            }
            // The refreshed answer carries a real ID token, and it passed the claim checks.
            let idToken = try #require(second.idToken)
            #expect(second.user?.identifier == "1")
            #expect(
                try IDTokenClaims(parsing: idToken).audience == [
                    try #require(RealServer.require().clients["password"]).clientId
                ]
            )

            // The server saw each refresh token once.
            let presented = try RealServer.tokenRequests().filter {
                $0.refreshTokenSHA256 == logDigest(first.refreshToken!)
            }
            #expect(presented.count == 1)
        }

        @Test func presentingASpentRefreshTokenIsTerminalAndRevokesTheFamily() async throws {
            let service = try RealServer.service(role: "password", scope: ["read"])
            let first = try await RealServer.signIn(service)
            let spent = try #require(first.refreshToken)
            let second = try await service.refresh(spent, scope: nil)

            let reuse = await #expect(throws: RemoteAuthError.self) { try await service.refresh(spent, scope: nil) }
            #expect(reuse?.serverCode == "invalid_grant")
            #expect(reuse?.kind == .terminal)
            #expect(reuse.map { "\($0)" }?.contains(spent) == false)

            // Reuse protection revoked the newest pair as well (Glewlwyd: the newest refresh
            // token only; its access token lives to its expiry).
            #expect(try await service.introspect(second.accessToken).isActive == (RealServer.kind == .glewlwyd))
            let newest = await #expect(throws: RemoteAuthError.self) {
                try await service.refresh(try #require(second.refreshToken), scope: nil)
            }
            #expect(newest?.kind == .terminal)
        }

        @Test func revocationThenIntrospectionSaysInactive() async throws {
            let clock = SystemClock()
            // The server's access tokens live 60 s: a small leeway lets an inactive one read as revoked.
            let service = try RealServer.service(
                role: "password",
                scope: ["openid", "read"],
                clock: clock,
                clockLeeway: 5
            )
            let tokens = try await RealServer.signIn(service)
            let session = ManagedSession(
                accessToken: tokens.accessToken,
                refreshToken: tokens.refreshToken,
                expiresAt: clock.now.timeIntervalSince1970 + (tokens.expiresIn ?? 60),
                issuedAt: clock.now.timeIntervalSince1970,
                user: tokens.user ?? ManagedUser(identifier: RealServer.kind == .glewlwyd ? "" : "1")
            )
            #expect(try await service.credentialState(for: session) == .authorized)
            #expect(try await service.userInfo(accessToken: tokens.accessToken).identifier == session.user.identifier)

            try await service.revoke(try #require(tokens.refreshToken), kind: .refreshToken)
            if RealServer.kind == .glewlwyd {
                // Glewlwyd revokes the one token it is given: the access token lives to its
                // expiry, so revoke it as a sign-out does.
                try await service.revoke(tokens.accessToken, kind: .accessToken)
            }
            #expect(try await service.introspect(tokens.accessToken).isActive == false)
            #expect(try await service.credentialState(for: session) == .revoked)
            let userInfo = await #expect(throws: RemoteAuthError.self) {
                try await service.userInfo(accessToken: tokens.accessToken)
            }
            #expect(userInfo?.reason == .accessTokenRejected, "refresh first: the refresh says the session is over")
            #expect(userInfo?.kind == .transient)
            let refresh = await #expect(throws: RemoteAuthError.self) {
                try await service.refresh(try #require(tokens.refreshToken), scope: nil)
            }
            #expect(refresh?.kind == .terminal)

            // Revoking again, or revoking nonsense, is not an error (RFC 7009 §2.2).
            try await service.revoke(try #require(tokens.refreshToken), kind: .refreshToken)
            try await service.revoke("never-issued-token-value", kind: .accessToken)
        }

        @Test(
            .enabled(
                if: RealServer.kind != .glewlwyd,
                "skipped against glewlwyd: it refuses a public client's revocation (401) and its password grant (403)"
            )
        )
        func publicClientRevokes() async throws {
            let service = try RealServer.service(role: "passwordPublic")
            let tokens = try await RealServer.signIn(service)
            try await service.revoke(tokens.accessToken, kind: .accessToken)
            let introspector = try RealServer.service(role: "password")
            #expect(try await introspector.introspect(tokens.accessToken).isActive == false)
        }

        @Test func realIDTokensFailTheChecksWhenTheyShould() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "password", scope: ["openid", "read"])
            let signedIn = try await RealServer.signIn(service)
            let refreshed = try await service.refresh(try #require(signedIn.refreshToken), scope: nil)
            // django-oauth-toolkit sends an ID token with a refresh, Glewlwyd with the sign-in.
            let claims = try IDTokenClaims(parsing: try #require(refreshed.idToken ?? signedIn.idToken))
            let clientID = try #require(server.clients["password"]).clientId
            let now = Date()
            try claims.validate(issuer: server.issuer, clientID: clientID, now: now)
            #expect(
                throws: IDTokenValidationError.issuerMismatch(expected: "https://evil.example/o", actual: server.issuer)
            ) {
                try claims.validate(issuer: "https://evil.example/o", clientID: clientID, now: now)
            }
            #expect(throws: IDTokenValidationError.audienceMismatch(expected: "other-client", actual: [clientID])) {
                try claims.validate(issuer: server.issuer, clientID: "other-client", now: now)
            }
            #expect(throws: IDTokenValidationError.expired(at: claims.expiresAt)) {
                try claims.validate(
                    issuer: server.issuer,
                    clientID: clientID,
                    now: claims.expiresAt.addingTimeInterval(61)
                )
            }

            // Through the service: a client configured for another issuer refuses the answer.
            let misconfigured = try RealServer.service(
                role: "password",
                scope: ["openid", "read"],
                issuer: "https://evil.example/o"
            )
            let error = await #expect(throws: RemoteAuthError.self) {
                if refreshed.idToken != nil {
                    try await misconfigured.refresh(try #require(refreshed.refreshToken), scope: nil)
                } else {
                    // Glewlwyd's refreshes carry no ID token to check: its sign-ins do.
                    try await RealServer.signIn(misconfigured)
                }
            }
            #expect(error?.kind == .misconfiguration)
            guard case .invalidIDToken(.issuerMismatch)? = error?.reason else {
                Issue.record("expected an issuer mismatch, got \(String(describing: error))")
                return
            }
        }

        @Test func eachMisconfigurationIsClassified() async throws {
            let server = try RealServer.require()
            if server.kind == .glewlwyd {
                try await eachMisconfigurationAtGlewlwyd(server)
                return
            }
            let wrongSecret = try RealServer.service(
                role: "password",
                authentication: .clientSecretBasic(secret: "wrong-secret")
            )
            let invalidClient = await #expect(throws: RemoteAuthError.self) { try await RealServer.signIn(wrongSecret) }
            #expect(invalidClient?.serverCode == "invalid_client")
            #expect(invalidClient?.statusCode == 401)

            let password = try RealServer.service(role: "password")
            let unauthorized = await #expect(throws: RemoteAuthError.self) {
                try await password.obtainTokens(with: .clientCredentials)
            }
            #expect(unauthorized?.serverCode == "unauthorized_client")

            let invalidScope = await #expect(throws: RemoteAuthError.self) {
                try await RealServer.signIn(password, scope: ["admin"])
            }
            #expect(invalidScope?.serverCode == "invalid_scope")

            let unsupported = await #expect(throws: RemoteAuthError.self) {
                try await password.obtainTokens(with: AuthGrant(grantType: "urn:example:made-up"))
            }
            #expect(unsupported?.serverCode == "unsupported_grant_type")

            for error in [invalidClient, unauthorized, invalidScope, unsupported] {
                #expect(error?.kind == .misconfiguration, "\(String(describing: error))")
            }

            let wrongPassword = await #expect(throws: RemoteAuthError.self) {
                try await password.obtainTokens(
                    with: .password(username: server.user.username, password: "not-the-password")
                )
            }
            #expect(wrongPassword?.serverCode == "invalid_grant")
            #expect(wrongPassword?.kind == .terminal)
            #expect(wrongPassword.map { "\($0)" }?.contains("not-the-password") == false)
        }

        /// Glewlwyd answers each misconfiguration with a bare status and no error object: the
        /// client can only say "misconfiguration", and a wrong password reads as one too (django
        /// says `invalid_grant`, terminal). An unknown scope is dropped, not refused.
        private func eachMisconfigurationAtGlewlwyd(_ server: OAuthTestServer) async throws {
            let wrongSecret = try RealServer.service(
                role: "password",
                authentication: .clientSecretBasic(secret: "wrong-secret")
            )
            let password = try RealServer.service(role: "password")
            var errors: [RemoteAuthError?] = []
            errors.append(await #expect(throws: RemoteAuthError.self) { try await RealServer.signIn(wrongSecret) })
            errors.append(
                await #expect(throws: RemoteAuthError.self) {
                    try await password.obtainTokens(with: .clientCredentials)
                }
            )
            errors.append(
                await #expect(throws: RemoteAuthError.self) {
                    try await password.obtainTokens(with: AuthGrant(grantType: "urn:example:made-up"))
                }
            )
            let wrongPassword = await #expect(throws: RemoteAuthError.self) {
                try await password.obtainTokens(
                    with: .password(username: server.user.username, password: "not-the-password")
                )
            }
            errors.append(wrongPassword)
            for error in errors {
                #expect(error?.kind == .misconfiguration, "\(String(describing: error))")
                #expect(error?.serverCode == nil, "Glewlwyd sends no error object")
                #expect([400, 401, 403].contains(error?.statusCode ?? 0), "\(String(describing: error))")
            }
            #expect(wrongPassword.map { "\($0)" }?.contains("not-the-password") == false)

            let dropped = try await RealServer.signIn(password, scope: ["read", "admin"])
            #expect(dropped.scope == ["read"], "an unknown scope is dropped, not refused")
        }
    }
}
