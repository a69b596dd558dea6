import AuthSession
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// The whole loopback flow, with a scripted browser over real sockets and a stub token endpoint:
/// the request, the browser, the redirect, the exchange, the manager.
@Suite(.timeLimit(.minutes(1))) struct LoopbackSignInTests {

    /// The browser: follows the authorization URL's redirect URI back with a code and its state.
    private static func redirectBack(from url: URL, code: String = "the-code") async throws -> RawHTTPClient.Reply {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let state = try #require(items.first { $0.name == "state" }?.value)
        let redirectURI = try #require(items.first { $0.name == "redirect_uri" }?.value.flatMap(URL.init(string:)))
        let port = try #require(redirectURI.port)
        return try #require(
            await RawHTTPClient.get(port: UInt16(port), "\(redirectURI.path)?code=\(code)&state=\(state)")
        )
    }

    @Test func theFlowEndsWithTheManagerSignedIn() async throws {
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON()))
        var configuration = Fixture.configuration
        configuration.fetchesUserInfo = false
        configuration.endpoints.introspection = nil
        let service = OAuth2Service(configuration: configuration, transport: transport)
        let provider = ManagedSessionProvider(store: InMemorySessionStore(), remote: service)
        let handle = AuthSessionHandle(sessionProvider: provider)
        var page: RawHTTPClient.Reply?
        let session = try await provider.signInThroughLoopback(using: service, scope: ["read"]) { url in
            #expect(url.absoluteString.hasPrefix("https://auth.example.com/o/authorize/?"))
            page = try await Self.redirectBack(from: url)
        }
        #expect(page?.status == 200 && page?.text.contains("You can close this window") == true)
        #expect(session.accessToken == Fixture.accessToken)
        #expect(provider.session == session)
        let exchange = try #require(transport.requests.first)
        #expect(exchange.form["grant_type"] == "authorization_code")
        #expect(exchange.form["code"] == "the-code")
        #expect(exchange.form["code_verifier"]?.count == 43)
        let redirectURI = try #require(exchange.form["redirect_uri"].flatMap(URL.init(string:)))
        #expect(redirectURI.host == "127.0.0.1" && redirectURI.port != nil && redirectURI.path == "/callback")
        _ = handle
    }

    /// A desktop app calls from the main actor with a closure that touches its main-actor state
    /// (a view model showing the URL): the closure runs there, and this compiles in Swift 6.
    @MainActor @Test func aMainActorCallerPassesAClosureThatTouchesItsState() async throws {
        final class SignInScreen {
            var shownURL: URL?
        }
        let screen = SignInScreen()
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(Fixture.json(200, Fixture.tokenJSON()))
        )
        let grant = try await service.authorizeThroughLoopback { url in
            MainActor.assertIsolated("openBrowser runs on the caller's actor")
            screen.shownURL = url
            _ = try await Self.redirectBack(from: url)
        }
        #expect(grant.grantType == "authorization_code")
        #expect(screen.shownURL?.host == "auth.example.com")
    }

    @Test func aBrowserThatCannotOpenEndsTheFlowAndClosesTheListener() async throws {
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(.init(statusCode: 500))
        )
        var port: UInt16?
        let error = await #expect(throws: BrowserSignInError.self) {
            try await service.authorizeThroughLoopback { url in
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                port = items.first { $0.name == "redirect_uri" }?.value.flatMap(URL.init(string:))?.port
                    .map { UInt16($0) }
                throw URLError(.unsupportedURL)
            }
        }
        #expect(error == .presentationFailed("the browser could not be opened"))
        #expect(await RawHTTPClient.get(port: try #require(port), "/callback") == nil, "the listener is closed")
    }

    @Test func cancellingTheFlowEndsItAndClosesTheListener() async throws {
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: StubTransport(.init(statusCode: 500))
        )
        let opened = AsyncStream<UInt16>.makeStream()
        let flow = Task {
            // A deadline inside the time limit: a cancellation that is not heard fails, never hangs.
            try await service.authorizeThroughLoopback(timeout: 20) { url in
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                let port = items.first { $0.name == "redirect_uri" }?.value.flatMap(URL.init(string:))?.port ?? 0
                opened.continuation.yield(UInt16(port))
            }
        }
        var ports = opened.stream.makeAsyncIterator()
        let port = try #require(await ports.next())
        // The listener answers: the flow is waiting.
        #expect(await RawHTTPClient.get(port: port, "/elsewhere")?.status == 404)
        flow.cancel()
        await #expect(throws: BrowserSignInError.cancelled) { try await flow.value }
        #expect(await RawHTTPClient.get(port: port, "/callback") == nil)
    }

    @Test func aServerWithoutAnAuthorizationEndpointIsARequestError() async throws {
        var configuration = Fixture.configuration
        configuration.endpoints.authorization = nil
        let service = OAuth2Service(configuration: configuration, transport: StubTransport(.init(statusCode: 500)))
        var opened = false
        let error = await #expect(throws: BrowserSignInError.self) {
            try await service.authorizeThroughLoopback { _ in opened = true }
        }
        guard case .request = error else {
            Issue.record("expected a request error, got \(String(describing: error))")
            return
        }
        #expect(!opened)
    }
}
