import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

/// No secret in what the client renders: errors, descriptions and every public type; scrubbing
/// never changes the error code that decides what the caller does.
@Suite struct ClientRedactionTests {

    @Test func shortSecretsAreScrubbedFromErrors() async throws {
        let transport = StubTransport(
            Fixture.json(400, #"{"error": "invalid_grant", "error_description": "wrong password hunter2 for alice"}"#)
        )
        let grant = AuthGrant.password(username: "alice", password: "hunter2")
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).obtainTokens(with: grant)
        }
        #expect(
            error?.serverDescription == "wrong password <redacted> for <redacted>",
            "the user name is personal data"
        )

        var configuration = Fixture.configuration
        configuration.client = OAuth2Client(id: "c", authentication: .clientSecretPost(secret: "s3cr3t!"))
        transport.answer { _ in
            .success(
                Fixture.json(
                    401,
                    #"{"error": "invalid_client", "error_description": "client secret 's3cr3t!' rejected"}"#
                )
            )
        }
        let clientError = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2Service(configuration: configuration, transport: transport).obtainTokens(
                with: .clientCredentials
            )
        }
        #expect(clientError.map { "\($0)" }?.contains("s3cr3t!") == false)
    }

    @Test func noPublicTypeRendersASecret() {
        let secret = "sup3r-s3cret-value"
        let values: [Any] = [
            OAuth2Client.Authentication.clientSecretPost(secret: secret),
            OAuth2Client.Authentication.clientSecretBasic(secret: secret),
            OAuth2HTTPResponse(statusCode: 200, headers: ["Set-Cookie": "sid=\(secret)"], body: Data(secret.utf8)),
        ]
        // Texts a third-party service puts in an error go through the redactor's shapes.
        let shaped = "tok_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
        for error in [
            RemoteAuthError(.server(code: shaped), statusCode: 400),
            RemoteAuthError(.invalidResponse("refresh_token=\(shaped)")),
        ] {
            var dumped = ""
            dump(error, to: &dumped)
            for text in ["\(error)", String(reflecting: error), dumped] {
                #expect(!text.contains(shaped), "\(text)")
            }
        }
        for value in values {
            var dumped = ""
            dump(value, to: &dumped)
            for text in ["\(value)", String(reflecting: value), dumped] {
                #expect(!text.contains(secret), "\(text)")
            }
        }
        var error = RemoteAuthError(.httpStatus(500), statusCode: 500)
        error.serverDescription = "access_token=\(secret)"
        #expect(error.serverDescription?.contains(secret) == false, "a description set later is cleaned too")
        let bidi = RemoteAuthError(.httpStatus(500), serverDescription: "evil\u{202E}txt\u{2028}next")
        #expect(bidi.serverDescription == "evil txt next")
    }

    /// Scrubbing a short user name or secret never rewrites the error code that decides what the
    /// caller does.
    @Test func scrubbingLeavesTheErrorCodeAlone() async throws {
        let transport = StubTransport(
            Fixture.json(400, #"{"error": "invalid_grant", "error_description": "no user ali"}"#)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).obtainTokens(with: .password(username: "ali", password: "pw1"))
        }
        #expect(error?.serverCode == "invalid_grant")
        #expect(error?.kind == .terminal)
        #expect(error?.serverDescription == "no user <redacted>")

        var configuration = Fixture.configuration
        configuration.client = OAuth2Client(id: "c", authentication: .clientSecretBasic(secret: "grant"))
        let refresh = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2Service(configuration: configuration, transport: transport).refresh(
                "rt-123456789",
                scope: nil
            )
        }
        #expect(refresh?.serverCode == "invalid_grant", "a spent token stays terminal whatever the secret")
        #expect(refresh?.kind == .terminal)
    }

    /// An error code is an identifier, but a refresh token fits in its 64 characters: a server
    /// that echoes the presented token (or a registered one) as its code gets it replaced, and
    /// the status still decides the kind. Standard codes are never touched.
    @Test(arguments: [
        "rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4",
        "bad_token:rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4",
    ])
    func anErrorCodeCarryingTheTokenIsReplaced(code: String) async throws {
        let transport = StubTransport(Fixture.json(400, #"{"error": "\#(code)"}"#))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh("rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4", scope: nil)
        }
        #expect(error?.serverCode == "invalid_error_code")
        #expect(error?.kind == .misconfiguration, "an unknown code on a 400 is never retried")
        let rendered = "\(String(describing: error)) \(error?.reason as Any) \(error?.serverCode ?? "")"
        #expect(!rendered.contains("9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4"))
    }

    @Test func anUnknownHarmlessErrorCodeIsKept() async throws {
        let transport = StubTransport(Fixture.json(400, #"{"error": "mfa_required"}"#))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh("rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4", scope: nil)
        }
        #expect(error?.serverCode == "mfa_required")
    }

    /// Secrets are scrubbed from the raw text, before cleaning and shortening could split them.
    @Test(arguments: [
        "hunter2", "ab\u{1F469}\u{200D}\u{1F4BB}cd", "correct\u{1F469}\u{200D}\u{1F4BB}horse", "tab\tpass",
        "pass\u{2028}word99",
    ])
    func secretsAreScrubbedBeforeCleaning(password: String) async throws {
        let padding = String(repeating: "x", count: 196)
        let description = "\(padding) \(password) was wrong; also \(password)"
        let body = try JSONSerialization.data(withJSONObject: [
            "error": "invalid_grant", "error_description": description,
        ])
        let transport = StubTransport(
            OAuth2HTTPResponse(statusCode: 400, headers: ["Content-Type": "application/json"], body: body)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).obtainTokens(with: .password(username: "someone", password: password))
        }
        let rendered = error.map { "\($0)" } ?? ""
        #expect(!rendered.isEmpty)
        // No run of 4 or more of the password's characters survives, even cut or cleaned.
        let scalars = Array(password.unicodeScalars)
        for start in 0..<max(0, scalars.count - 3) {
            let piece = String(String.UnicodeScalarView(scalars[start..<start + 4]))
            #expect(!rendered.contains(piece), "\(rendered)")
        }
    }
}
