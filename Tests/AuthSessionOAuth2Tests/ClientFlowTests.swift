import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// What the client sends for each grant, authentication method and endpoint.
@Suite struct ClientFlowTests {

    private func service(
        _ transport: StubTransport,
        client: OAuth2Client,
        clock: ManualClock = ManualClock()
    )
        -> OAuth2Service
    {
        var configuration = Fixture.configuration
        configuration.client = client
        return OAuth2Service(configuration: configuration, transport: transport, clock: clock)
    }

    @Test func clientSecretBasicFormEncodesThenBase64s() async throws {
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON()))
        let client = OAuth2Client(id: "my client", authentication: .clientSecretBasic(secret: "s3cr:t/+"))
        _ = try await service(transport, client: client).obtainTokens(with: .clientCredentials)
        let request = try #require(transport.requests.first)
        let expected = Data("my%20client:s3cr%3At%2F%2B".utf8).base64EncodedString()
        #expect(request.header("Authorization") == "Basic \(expected)")
        #expect(request.form == ["grant_type": "client_credentials", "scope": "openid profile"])
        #expect(request.method == "POST")
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.header("Connection") == nil, "Connection: close on a POST hangs URLSession on Linux")
    }

    @Test func clientSecretPostAndPublicClients() async throws {
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON()))
        _ = try await service(
            transport,
            client: OAuth2Client(id: "c1", authentication: .clientSecretPost(secret: "pw-123"))
        )
        .obtainTokens(with: .password(username: "ada", password: "p&ss=word", scope: ["read"]))
        _ = try await service(transport, client: OAuth2Client(id: "c2")).obtainTokens(with: .deviceCode("dc-abcdef"))
        // Each sign-in without an ID token also introspects its access token for a subject.
        let grants = transport.requests.filter { $0.form["grant_type"] != nil }
        let (post, publicClient) = (grants[0], grants[1])
        #expect(post.header("Authorization") == nil)
        #expect(
            post.form == [
                "grant_type": "password", "username": "ada", "password": "p&ss=word", "scope": "read",
                "client_id": "c1", "client_secret": "pw-123",
            ]
        )
        #expect(
            publicClient.form == [
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                "device_code": "dc-abcdef", "scope": "openid profile", "client_id": "c2",
            ]
        )
    }

    @Test func secretsNeverShowInDescriptions() {
        let client = OAuth2Client(id: "c1", authentication: .clientSecretBasic(secret: "hunter2-secret"))
        let grant = AuthGrant.password(username: "ada", password: "hunter2-password")
        let tokens = IssuedTokens(
            accessToken: Fixture.accessToken,
            refreshToken: Fixture.refreshToken,
            idToken: "id.tok.en"
        )
        for text in [
            "\(client)", String(reflecting: client), "\(grant)", String(reflecting: grant), "\(tokens)",
            String(reflecting: tokens), dumped(client), dumped(grant), dumped(tokens),
        ] {
            for secret in [
                "hunter2-secret", "hunter2-password", Fixture.accessToken, Fixture.refreshToken, "id.tok.en",
            ] {
                #expect(!text.contains(secret), "\(text)")
            }
        }
    }

    private func dumped(_ value: Any) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }

    @Test func revokeSendsTheHintAndTreatsAnyTwoHundredAsDone() async throws {
        let transport = StubTransport(OAuth2HTTPResponse(statusCode: 200))
        try await Fixture.service(transport).revoke(Fixture.refreshToken, kind: .refreshToken)
        #expect(
            transport.requests.first?.form == [
                "token": Fixture.refreshToken, "token_type_hint": "refresh_token",
                "client_id": Fixture.clientID,
            ]
        )
        #expect(transport.requests.first?.url.absoluteString == "https://auth.example.com/o/revoke_token/")
        transport.answer { _ in .success(Fixture.json(400, #"{"error": "unsupported_token_type"}"#)) }
        await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).revoke("token-abcdef", kind: .accessToken)
        }
    }

    @Test func missingEndpointsAreMisconfiguration() async throws {
        let configuration = OAuth2Configuration(
            issuer: nil,
            endpoints: OAuth2Endpoints(token: URL(string: "https://a.example/token")!),
            client: OAuth2Client(id: "c")
        )
        let service = OAuth2Service(
            configuration: configuration,
            transport: StubTransport(OAuth2HTTPResponse(statusCode: 200))
        )
        for error in [
            await #expect(throws: RemoteAuthError.self) {
                try await service.revoke("tok-12345678", kind: .accessToken)
            },
            await #expect(throws: RemoteAuthError.self) { try await service.introspect("tok-12345678") },
            await #expect(throws: RemoteAuthError.self) { try await service.userInfo(accessToken: "tok-12345678") },
            await #expect(throws: RemoteAuthError.self) { try await service.startDeviceAuthorization() },
            #expect(throws: RemoteAuthError.self) {
                try service.authorizationRequest(redirectURI: URL(string: "app:/cb")!)
            },
        ] {
            #expect(error?.kind == .misconfiguration)
        }
    }

    /// A session whose access token is valid for ten more minutes on `clock`.
    private func liveSession(_ clock: ManualClock) -> ManagedSession {
        ManagedSession(
            accessToken: Fixture.accessToken,
            expiresAt: clock.now.timeIntervalSince1970 + 600,
            issuedAt: clock.now.timeIntervalSince1970,
            user: ManagedUser(identifier: "u")
        )
    }

    @Test func credentialStateFromIntrospection() async throws {
        let clock = ManualClock()
        let live = liveSession(clock)
        var expired = live
        expired.expiresAt = clock.now.timeIntervalSince1970 - 1
        let transport = StubTransport(Fixture.json(200, #"{"active": true, "scope": "read", "exp": 1800000600}"#))
        let service = Fixture.service(transport, clock: clock)
        #expect(try await service.credentialState(for: live) == .authorized)
        transport.answer { _ in .success(Fixture.json(200, #"{"active": false}"#)) }
        #expect(try await service.credentialState(for: live) == .revoked)
        #expect(try await service.credentialState(for: expired) == .authorized, "an expired token tells nothing")
        transport.answer { _ in .failure(RemoteAuthError(.network(code: -1009))) }
        await #expect(throws: RemoteAuthError(.network(code: -1009))) { try await service.credentialState(for: live) }
        transport.answer { _ in .success(Fixture.json(200, #"{"active": "yes"}"#)) }
        let error = await #expect(throws: RemoteAuthError.self) { try await service.credentialState(for: live) }
        #expect(error?.kind == .transient)
    }

    @Test func credentialStateFromUserInfoWithoutIntrospection() async throws {
        var configuration = Fixture.configuration
        configuration.endpoints.introspection = nil
        let clock = ManualClock()
        let live = liveSession(clock)
        let transport = StubTransport(Fixture.json(200, #"{"sub": "u"}"#))
        let service = OAuth2Service(configuration: configuration, transport: transport, clock: clock)
        #expect(try await service.credentialState(for: live) == .authorized)
        #expect(transport.requests.last?.header("Authorization") == "Bearer \(Fixture.accessToken)")
        transport.answer { _ in
            .success(
                OAuth2HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            )
        }
        #expect(try await service.credentialState(for: live) == .revoked)
        transport.answer { _ in .success(OAuth2HTTPResponse(statusCode: 503)) }
        await #expect(throws: RemoteAuthError.self) { try await service.credentialState(for: live) }
    }

    @Test func signInWithoutIDTokenAsksUserInfo() async throws {
        let transport = StubTransport { request in
            request.url.absoluteString.hasSuffix("/userinfo/")
                ? .success(
                    Fixture.json(
                        200,
                        #"{"sub": "user-7", "email": "u7@example.com", "given_name": "Grace", "family_name": "Hopper"}"#
                    )
                )
                : .success(Fixture.json(200, Fixture.tokenJSON(extra: #", "scope": "openid read""#)))
        }
        let tokens = try await Fixture.service(transport).obtainTokens(with: .password(username: "u", password: "p"))
        #expect(
            tokens.user
                == ManagedUser(
                    identifier: "user-7",
                    name: "Grace Hopper",
                    email: "u7@example.com",
                    profile: ["given_name": "Grace", "family_name": "Hopper"]
                )
        )

        transport.answer { request in
            request.url.absoluteString.hasSuffix("/userinfo/")
                ? .success(OAuth2HTTPResponse(statusCode: 500))
                : .success(Fixture.json(200, Fixture.tokenJSON(extra: #", "scope": "openid read""#)))
        }
        let withoutUser = try await Fixture.service(transport).obtainTokens(
            with: .password(username: "u", password: "p")
        )
        #expect(withoutUser.user == nil, "userinfo is best effort: the sign-in stands")
        #expect(withoutUser.accessToken == Fixture.accessToken)
    }

    @Test func refreshNeverMakesASecondRequest() async throws {
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON(extra: #", "scope": "openid""#)))
        _ = try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: ["openid"])
        #expect(transport.requests.count == 1)
        #expect(transport.requests[0].form["scope"] == "openid")
    }
}
