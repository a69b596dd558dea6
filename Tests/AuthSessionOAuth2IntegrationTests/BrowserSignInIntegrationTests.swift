import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

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
            let browser = ScriptedBrowser(server: server, requestTimeout: 20)
            try await browser.signIn()

            let visit = ConcurrencySafeContainer<ScriptedBrowser.Visit?>(nil)
            let session = try await provider.signInThroughLoopback(using: service) { url in
                // The app's "open the browser": here, a scripted one that goes all the way.
                let seen = try await browser.authorize(url)
                visit.withLock { $0 = seen }
            }
            let seen = try #require(visit.withLock { $0 })
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
            let browser = ScriptedBrowser(server: server, requestTimeout: 20)
            try await browser.signIn()
            let visit = ConcurrencySafeContainer<ScriptedBrowser.Visit?>(nil)
            let error = await #expect(throws: BrowserSignInError.self) {
                try await service.authorizeThroughLoopback { url in
                    let seen = try await browser.authorize(url, approve: false)
                    visit.withLock { $0 = seen }
                }
            }
            #expect(error == .redirect(.server(code: "access_denied", description: nil)))
            let page = visit.withLock { $0?.listenerPage }
            #expect(page?.contains("Sign-in failed") == true)
            #expect(page?.contains("access_denied") == true)
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
            let browser = ScriptedBrowser(server: server, requestTimeout: 20)
            try await browser.signIn()
            let visit = ConcurrencySafeContainer<ScriptedBrowser.Visit?>(nil)
            let grant = try await strict.authorizeThroughLoopback { url in
                let seen = try await browser.authorize(url)
                visit.withLock { $0 = seen }
            }
            let redirect = try #require(visit.withLock { $0?.redirect })
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
            let browser = ScriptedBrowser(server: server, requestTimeout: 20)
            try await browser.signIn()
            let strays = ConcurrencySafeContainer<[Int]>([])
            let grant = try await service.authorizeThroughLoopback { url in
                let redirectURI = try #require(
                    URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first {
                        $0.name == "redirect_uri"
                    }?.value.flatMap(URL.init(string:))
                )
                let favicon = URL(string: "/favicon.ico", relativeTo: redirectURI)!.absoluteURL
                let faviconStatus = try await browser.get(favicon).status
                let forged = try await browser.get(URL(string: redirectURI.absoluteString + "?code=x&state=forged")!)
                strays.withLock { $0 += [faviconStatus, forged.status] }
                _ = try await browser.authorize(url)
            }
            #expect(strays.withLock { $0 } == [404, 400])
            let tokens = try await service.obtainTokens(with: grant)
            #expect(!tokens.accessToken.isEmpty)
        }
    }
}
