import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// What a token endpoint may answer, and what the client makes of it.
@Suite struct TokenResponseTests {

    @Test func wellFormedAnswerGivesTokensAndUser() async throws {
        let clock = ManualClock()
        let idToken = Fixture.idToken(Fixture.claims(now: clock.now))
        let transport = StubTransport(
            Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(idToken)", "scope": "openid profile""#))
        )
        let tokens = try await Fixture.service(transport, clock: clock).refresh(Fixture.refreshToken, scope: nil)
        #expect(tokens.accessToken == Fixture.accessToken)
        #expect(tokens.refreshToken == Fixture.refreshToken)
        #expect(tokens.expiresIn == 3600)
        #expect(tokens.scope == ["openid", "profile"])
        #expect(
            tokens.user
                == ManagedUser(
                    identifier: "user-42",
                    name: "Ada Lovelace",
                    email: "ada@example.com",
                    profile: ["preferred_username": "ada"]
                )
        )
        let form = try #require(transport.requests.first).form
        #expect(
            form == [
                "grant_type": "refresh_token", "refresh_token": Fixture.refreshToken, "client_id": Fixture.clientID,
            ]
        )
    }

    /// Each hostile answer is a typed error of the expected kind; none crashes, none leaks a token.
    @Test(arguments: [
        (#"{"refresh_token": "x", "token_type": "Bearer"}"#, RemoteAuthError.Kind.transient, "access_token"),
        (#"{"access_token": 42, "token_type": "Bearer"}"#, .transient, "access_token"),
        (#"{"access_token": "", "token_type": "Bearer"}"#, .transient, "access_token"),
        (#"{"access_token": "a-token-value", "token_type": "Bearer", "expires_in": -5}"#, .transient, "expires_in"),
        (#"{"access_token": "a-token-value", "token_type": "Bearer", "expires_in": 1e300}"#, .transient, "expires_in"),
        (#"{"access_token": "a-token-value", "token_type": "Bearer", "expires_in": "3600"}"#, .transient, "expires_in"),
        (#"{"access_token": "a-token-value", "token_type": "Bearer", "expires_in": true}"#, .transient, "expires_in"),
        (#"{"access_token": "a-token-value"}"#, .transient, "token_type"),
        (#"{"access_token": "a-token-value", "token_type": "mac"}"#, .misconfiguration, "unsupported token type"),
        (
            #"{"access_token": "a-token-value", "token_type": "Bearer", "refresh_token": 7}"#, .transient,
            "refresh_token"
        ),
        (#"{"access_token": "a-token-value", "token_type": "Bearer", "scope": ["a"]}"#, .transient, "scope"),
        (
            #"{"access_token": "a-token-value", "token_type": "Bearer", "id_token": "not.a.jwt"}"#, .misconfiguration,
            "ID token"
        ),
        (#"["access_token"]"#, .transient, "JSON object"),
        (#"{"access_token": "a-token-value", "#, .transient, "JSON object"),
        ("", .transient, "JSON object"),
        (#"{"error": "invalid_grant", "error_description": "token spent"}"#, .terminal, "invalid_grant"),
    ])
    func hostileSuccessAnswers(body: String, kind: RemoteAuthError.Kind, mentions: String) async throws {
        let transport = StubTransport(Fixture.json(200, body))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.kind == kind)
        #expect(error?.description.contains(mentions) == true, "\(String(describing: error))")
        #expect(error?.description.contains(Fixture.refreshToken) == false)
    }

    @Test func invalidUTF8IsATypedError() async throws {
        var body = Data(#"{"access_token": "abc"#.utf8)
        body.append(contentsOf: [0xFF, 0xFE, 0xC3])
        body.append(contentsOf: Array(#"", "token_type": "Bearer"}"#.utf8))
        let transport = StubTransport(
            OAuth2HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.reason == .invalidResponse("body is not a JSON object"))
        #expect(error?.kind == .transient)
    }

    @Test func tenMegabyteBodyIsRefused() async throws {
        let body = Data(repeating: UInt8(ascii: "a"), count: 10 * 1024 * 1024)
        let transport = StubTransport(
            OAuth2HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.reason == .responseTooLarge(limit: 256 * 1024))
        #expect(error?.kind == .transient)
    }

    @Test func jsonWithoutJSONContentTypeIsNotTrusted() async throws {
        let transport = StubTransport(
            OAuth2HTTPResponse(
                statusCode: 200,
                headers: ["Content-Type": "text/html"],
                body: Data(Fixture.tokenJSON().utf8)
            )
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.reason == .invalidResponse("content type is not JSON"))
    }

    @Test func contentTypeParametersAndVendorTypesAreJSON() async throws {
        for type in ["application/json; charset=utf-8", "APPLICATION/JSON", "application/problem+json"] {
            let transport = StubTransport(
                OAuth2HTTPResponse(
                    statusCode: 200,
                    headers: ["content-type": type],
                    body: Data(Fixture.tokenJSON().utf8)
                )
            )
            let tokens = try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
            #expect(tokens.accessToken == Fixture.accessToken, "\(type)")
        }
    }

    @Test func missingExpiryAndLowercaseBearerAreAccepted() async throws {
        let transport = StubTransport(Fixture.json(200, #"{"access_token": "a-token-value", "token_type": "bearer"}"#))
        let tokens = try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        #expect(tokens.expiresIn == nil)
        #expect(tokens.refreshToken == nil)
    }

    @Test func serverEchoingTheTokenDoesNotLeakIt() async throws {
        // The refresh token is short and plain: no shape rule would catch it, the exact one must.
        let token = "plain-refresh-1"
        let transport = StubTransport(
            Fixture.json(
                400,
                #"{"error": "invalid_grant", "error_description": "refresh token plain-refresh-1 was used"}"#
            )
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(token, scope: nil)
        }
        let rendered = [error?.description, error?.serverDescription, String(describing: error), error.map { "\($0)" }]
            .compactMap { $0 }
        #expect(!rendered.isEmpty)
        for text in rendered {
            #expect(!text.contains(token), "\(text)")
        }
        #expect(error?.serverDescription == "refresh token <redacted> was used")
    }

    @Test func hostileErrorCodeIsReplaced() async throws {
        let transport = StubTransport(
            Fixture.json(400, #"{"error": "bad\ncode \"quoted\" \#(String(repeating: "x", count: 100))"}"#)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        #expect(error?.serverCode == "invalid_error_code")
        #expect(error?.kind == .misconfiguration)
    }

    @Test func serverDescriptionIsShortenedAndCleaned() async throws {
        let long = String(repeating: "word ", count: 200)
        let transport = StubTransport(
            Fixture.json(400, #"{"error": "invalid_request", "error_description": "line\u0000one\n\#(long)"}"#)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh(Fixture.refreshToken, scope: nil)
        }
        let description = try #require(error?.serverDescription)
        #expect(description.count <= 201)
        #expect(!description.contains("\n") && !description.contains("\u{0}"))
    }
}
