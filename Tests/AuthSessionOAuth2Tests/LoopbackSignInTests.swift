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
        // First the check of the request (a GET of the authorization URL), then the exchange.
        #expect(transport.requests.map(\.method) == ["GET", "POST"])
        #expect(
            transport.requests.first?.url.absoluteString.hasPrefix("https://auth.example.com/o/authorize/?") == true
        )
        let exchange = try #require(transport.requests.last)
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

    /// The authorization endpoint answers the check with `answer`; the token endpoint with tokens.
    private static func server(authorization answer: @escaping @Sendable (URL) -> OAuth2HTTPResponse) -> StubTransport {
        StubTransport { request in
            if request.method == "GET" { return .success(answer(request.url)) }
            return .success(Fixture.json(200, Fixture.tokenJSON()))
        }
    }

    /// The redirect URI and state an authorization URL carries.
    private static func redirect(of url: URL) -> (uri: String, state: String) {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return (
            items.first { $0.name == "redirect_uri" }?.value ?? "",
            items.first { $0.name == "state" }?.value ?? ""
        )
    }

    @Test(
        "a request the server refuses fails at once with the server's reason, and no browser opens: an unknown client (400 with an error object), an unregistered redirect URI (a 400 page), a wrong endpoint (404)"
    )
    func aRefusedRequestFailsAtOnce() async throws {
        let answers: [(OAuth2HTTPResponse, RemoteAuthError.Reason)] = [
            (
                Fixture.json(400, #"{"error":"invalid_client","error_description":"Unknown client"}"#),
                .server(code: "invalid_client")
            ),
            (
                OAuth2HTTPResponse(
                    statusCode: 400,
                    headers: ["Content-Type": "text/html"],
                    body: Data("<h1>Invalid redirect_uri</h1>".utf8)
                ),
                .httpStatus(400)
            ),
            (OAuth2HTTPResponse(statusCode: 404), .httpStatus(404)),
        ]
        for (answer, reason) in answers {
            let service = OAuth2Service(configuration: Fixture.configuration, transport: Self.server { _ in answer })
            let opened = ConcurrencySafeContainer(false)
            let started = Date()
            let error = await #expect(throws: BrowserSignInError.self) {
                try await service.authorizeThroughLoopback(timeout: 300) { _ in opened.withLock { $0 = true } }
            }
            #expect(!opened.withLock { $0 }, "the browser opened for a refused request")
            guard case .request(let refusal)? = error else {
                Issue.record("not the server's refusal: \(String(describing: error))")
                continue
            }
            #expect(refusal.reason == reason)
            if case .server = reason {
                #expect("\(BrowserSignInError.request(refusal))".contains("Unknown client"), "the server's reason")
            }
            #expect(Date().timeIntervalSince(started) < 240, "it waited for the redirect (300 s)")
        }
    }

    @Test(
        "a server that checked the request and redirects its error back (invalid_scope): the flow fails at once with it; the state is checked as for any redirect"
    )
    func aRedirectedErrorFailsAtOnce() async throws {
        let service = OAuth2Service(
            configuration: Fixture.configuration,
            transport: Self.server { url in
                let (uri, state) = Self.redirect(of: url)
                return OAuth2HTTPResponse(
                    statusCode: 302,
                    headers: [
                        "Location": "\(uri)?error=invalid_scope&error_description=Scope+not+allowed&state=\(state)"
                    ]
                )
            }
        )
        let opened = ConcurrencySafeContainer(false)
        let error = await #expect(throws: BrowserSignInError.self) {
            try await service.authorizeThroughLoopback { _ in opened.withLock { $0 = true } }
        }
        #expect(!opened.withLock { $0 })
        #expect(error == .redirect(.server(code: "invalid_scope", description: "Scope not allowed")))

        // A forged error (another state) is not the server's answer to this request.
        let forged = OAuth2Service(
            configuration: Fixture.configuration,
            transport: Self.server { url in
                let (uri, _) = Self.redirect(of: url)
                return OAuth2HTTPResponse(
                    statusCode: 302,
                    headers: ["Location": "\(uri)?error=access_denied&state=other"]
                )
            }
        )
        let forgedError = await #expect(throws: BrowserSignInError.self) {
            try await forged.authorizeThroughLoopback { _ in }
        }
        #expect(forgedError == .redirect(.stateMismatch))
    }

    @Test(
        "the sign-in page, a redirect to it, a server error, a shield's 403 or no answer at all: the browser opens as before"
    )
    func anythingElseOpensTheBrowser() async throws {
        let answers: [OAuth2HTTPResponse?] = [
            OAuth2HTTPResponse(statusCode: 200, headers: ["Content-Type": "text/html"], body: Data("<form>".utf8)),
            OAuth2HTTPResponse(statusCode: 302, headers: ["Location": "/accounts/login/?next=/o/authorize/"]),
            OAuth2HTTPResponse(statusCode: 503),
            OAuth2HTTPResponse(statusCode: 403),
            nil,
        ]
        for answer in answers {
            let transport = StubTransport { request in
                guard request.method == "GET" else { return .success(Fixture.json(200, Fixture.tokenJSON())) }
                return answer.map { .success($0) } ?? .failure(RemoteAuthError(.network(code: -1004)))
            }
            let service = OAuth2Service(configuration: Fixture.configuration, transport: transport)
            let grant = try await service.authorizeThroughLoopback { url in
                _ = try await Self.redirectBack(from: url)
            }
            #expect(grant.grantType == "authorization_code")
        }
        // And with the check turned off, no request is made before the browser.
        let transport = StubTransport(.init(statusCode: 400))
        let service = OAuth2Service(configuration: Fixture.configuration, transport: transport)
        _ = try await service.authorizeThroughLoopback(checksRequestFirst: false) { url in
            _ = try await Self.redirectBack(from: url)
        }
        #expect(transport.requests.isEmpty)
    }
}
