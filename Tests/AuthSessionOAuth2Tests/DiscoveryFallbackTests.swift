import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

/// Discovery across the well-known documents: a broken or slow one is skipped, never terminal.
@Suite struct DiscoveryFallbackTests {

    @Test func discoverySkipsBrokenDocumentsAndIsNeverTerminal() async throws {
        let good = #"{"issuer": "https://a.example/o", "token_endpoint": "https://a.example/o/token/"}"#
        let transport = StubTransport { request in
            request.url.absoluteString.hasSuffix("openid-configuration")
                ? .success(Fixture.json(200, good))
                : .success(
                    OAuth2HTTPResponse(
                        statusCode: 403,
                        headers: ["Content-Type": "text/html"],
                        body: Data("<html>".utf8)
                    )
                )
        }
        let metadata = try await OAuth2ServerMetadata.discover(
            issuer: URL(string: "https://a.example/o")!,
            transport: transport
        )
        #expect(metadata.tokenEndpoint.absoluteString == "https://a.example/o/token/")

        transport.answer { _ in .success(Fixture.json(401, #"{"error": "invalid_token"}"#)) }
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.kind == .misconfiguration)
    }

    @Test func discoveryDoesNotDropADocumentThatTimedOut() async throws {
        let good = #"{"issuer": "https://a.example/o", "token_endpoint": "https://a.example/o/token/"}"#
        let transport = StubTransport { request in
            request.url.absoluteString.hasSuffix("openid-configuration")
                ? .success(Fixture.json(200, good)) : .failure(RemoteAuthError(.timedOut))
        }
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.reason == .timedOut)
    }
}
