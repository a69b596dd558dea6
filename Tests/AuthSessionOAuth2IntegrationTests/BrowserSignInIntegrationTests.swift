import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Browser sign-in against the real server, driven over HTTP as a browser would: log in, open
/// the authorization URL, approve the consent form, follow the redirect to the loopback listener.
extension RealServerTests {
    @Suite(.timeLimit(.minutes(1))) struct BrowserSignInIntegrationTests {

        @Test func loopbackSignInThroughTheConsentPageReachesTheManager() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(
                role: "authorizationCodeConsent",
                scope: ["openid", "profile", "email"]
            )
            let provider = ManagedSessionProvider(store: InMemorySessionStore(), remote: service)
            let handle = AuthSessionHandle(sessionProvider: provider)
            let browser = ConsentingBrowser(server: server)
            try await browser.signIn()

            var visit: ConsentingBrowser.Visit?
            let session = try await provider.signInThroughLoopback(using: service) { url in
                // The app's "open the browser": here, a scripted one that goes all the way.
                visit = try await browser.authorize(url)
            }
            let seen = try #require(visit)
            #expect(seen.consentPageShown, "the consent form was shown and approved")
            #expect(seen.listenerStatus == 200)
            #expect(seen.listenerPage.contains("You can close this window"))
            let redirect = try #require(URLComponents(url: seen.redirect, resolvingAgainstBaseURL: false))
            #expect(redirect.host == "127.0.0.1" && redirect.port != nil && redirect.path == "/callback")

            #expect(session.user.email == server.user.email, "the manager is signed in as the test user")
            #expect(session.user.identifier == "1")
            #expect(provider.session == session)
            #expect(session.idToken != nil)
            _ = handle
        }

        @Test func declinedConsentShowsTheErrorPageAndSignsNobodyIn() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "authorizationCodeConsent", scope: ["openid"])
            let browser = ConsentingBrowser(server: server)
            try await browser.signIn()
            var visit: ConsentingBrowser.Visit?
            let error = await #expect(throws: BrowserSignInError.self) {
                try await service.authorizeThroughLoopback { url in
                    visit = try await browser.authorize(url, approve: false)
                }
            }
            #expect(error == .redirect(.server(code: "access_denied", description: nil)))
            #expect(visit?.listenerPage.contains("Sign-in failed") == true)
            #expect(visit?.listenerPage.contains("access_denied") == true)
        }

        /// DOT 3.4.1 neither advertises nor sends RFC 9207's `iss` unless
        /// `COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS` is on; the client requires it exactly when
        /// the metadata advertises it, so both settings pass.
        @Test func issuerInTheRedirectMatchesWhatTheMetadataSays() async throws {
            let server = try RealServer.require()
            let metadata = try await OAuth2ServerMetadata.discover(issuer: URL(string: server.issuer)!)
            let service = try RealServer.service(role: "authorizationCodeConsent", scope: ["openid"])
            var configuration = service.configuration
            configuration.requiresIssuerInAuthorizationResponse = metadata.authorizationResponseIssParameterSupported
            let strict = OAuth2Service(configuration: configuration)
            let browser = ConsentingBrowser(server: server)
            try await browser.signIn()
            var visit: ConsentingBrowser.Visit?
            let grant = try await strict.authorizeThroughLoopback { url in
                visit = try await browser.authorize(url)
            }
            let redirect = try #require(visit?.redirect)
            let iss = URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.queryItems?.first {
                $0.name == "iss"
            }
            if metadata.authorizationResponseIssParameterSupported {
                #expect(iss?.value == server.issuer)
            } else {
                #expect(iss == nil, "not advertised, not sent")
            }
            let tokens = try await strict.obtainTokens(with: grant)
            #expect(tokens.user?.identifier == "1")
        }

        /// A request the scripted browser sends to the wrong path, or with a forged state, gets an
        /// answer and the real redirect still signs in.
        @Test func strayRequestsToTheListenerDoNotEndTheSignIn() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "authorizationCodeConsent", scope: ["openid"])
            let browser = ConsentingBrowser(server: server)
            try await browser.signIn()
            var strays: [Int] = []
            let grant = try await service.authorizeThroughLoopback { url in
                let redirectURI = try #require(
                    URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first {
                        $0.name == "redirect_uri"
                    }?.value.flatMap(URL.init(string:))
                )
                let favicon = URL(string: "/favicon.ico", relativeTo: redirectURI)!.absoluteURL
                strays.append(try await browser.get(favicon).status)
                strays.append(
                    try await browser.get(URL(string: redirectURI.absoluteString + "?code=x&state=forged")!).status
                )
                _ = try await browser.authorize(url)
            }
            #expect(strays == [404, 400])
            let tokens = try await service.obtainTokens(with: grant)
            #expect(!tokens.accessToken.isEmpty)
        }
    }
}

/// A person at a browser, scripted: one cookie store, the admin login, the consent form, and the
/// redirect followed to wherever it points.
///
/// Not thread-safe: use from one task at a time.
final class ConsentingBrowser {

    /// What one authorization visit saw.
    struct Visit {
        var consentPageShown: Bool
        var redirect: URL
        var listenerStatus: Int
        var listenerPage: String
    }

    private let server: OAuthTestServer
    private let session: URLSession
    private let cookies: HTTPCookieStorage

    init(server: OAuthTestServer) {
        self.server = server
        let configuration = URLSessionConfiguration.ephemeral
        cookies = configuration.httpCookieStorage ?? HTTPCookieStorage.shared
        configuration.httpCookieAcceptPolicy = .always
        configuration.httpShouldSetCookies = true
        configuration.timeoutIntervalForRequest = 20
        session = URLSession(configuration: configuration, delegate: RedirectsNotFollowed(), delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    private var csrfToken: String? {
        cookies.cookies(for: server.baseURL)?.first { $0.name == "csrftoken" }?.value
    }

    /// Logs the test user in at the admin login.
    func signIn() async throws {
        _ = try await get(server.endpoints.adminLogin)
        let token = try #require(csrfToken, "the login page set no CSRF cookie")
        let answer = try await post(
            server.endpoints.adminLogin,
            [
                ("csrfmiddlewaretoken", token), ("username", server.user.username),
                ("password", server.user.password), ("next", "/admin/"),
            ]
        )
        try #require(answer.status == 302, "login failed: HTTP \(answer.status)")
    }

    /// Opens the authorization URL, approves (or cancels) the consent form, and follows the
    /// server's redirect to the loopback listener.
    func authorize(_ url: URL, approve: Bool = true) async throws -> Visit {
        var answer = try await get(url)
        var consentPageShown = false
        if answer.status == 200 {
            // The consent form posts its hidden fields back to the same URL; "Authorize" is the
            // only named submit button, "Cancel" sends no button.
            consentPageShown = answer.body.contains("authorizationForm")
            var fields = Self.hiddenFields(in: answer.body)
            try #require(fields.contains { $0.0 == "csrfmiddlewaretoken" }, "no consent form")
            if approve {
                fields.append(("allow", "Authorize"))
            }
            answer = try await post(url, fields)
        }
        try #require(answer.status == 302, "the authorization endpoint answered HTTP \(answer.status)")
        let location = try #require(answer.location.flatMap { URL(string: $0, relativeTo: url)?.absoluteURL })
        let page = try await get(location)
        return Visit(
            consentPageShown: consentPageShown,
            redirect: location,
            listenerStatus: page.status,
            listenerPage: page.body
        )
    }

    struct Answer {
        var status: Int
        var location: String?
        var body: String
    }

    func get(_ url: URL) async throws -> Answer {
        try await send(URLRequest(url: url))
    }

    private func post(_ url: URL, _ fields: [(String, String)]) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = Data(
            fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
                .joined(separator: "&").utf8
        )
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let response = response as? HTTPURLResponse {
                    continuation.resume(
                        returning: Answer(
                            status: response.statusCode,
                            location: response.value(forHTTPHeaderField: "Location"),
                            body: String(decoding: data ?? Data(), as: UTF8.self)
                        )
                    )
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }

    /// The `name` and `value` of every hidden input, in order, HTML entities decoded.
    static func hiddenFields(in html: String) -> [(String, String)] {
        var fields: [(String, String)] = []
        var rest = html[...]
        while let start = rest.range(of: "<input"), let end = rest[start.upperBound...].range(of: ">") {
            let tag = rest[start.upperBound..<end.lowerBound]
            rest = rest[end.upperBound...]
            guard tag.contains("type=\"hidden\""), let name = attribute("name", in: tag) else { continue }
            fields.append((name, attribute("value", in: tag) ?? ""))
        }
        return fields
    }

    private static func attribute(_ name: String, in tag: Substring) -> String? {
        guard let start = tag.range(of: " \(name)=\"") else { return nil }
        let value = tag[start.upperBound...].prefix { $0 != "\"" }
        return String(value)
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#x27;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// Stops URLSession from following redirects: the browser follows them itself.
private final class RedirectsNotFollowed: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
