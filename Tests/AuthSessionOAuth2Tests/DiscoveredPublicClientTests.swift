import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import Foundation
import Testing

@testable import AuthSessionProviders

/// Issue 27, item 4: a public client configured by discovery does not call the introspection
/// endpoint, which requires client authentication (RFC 7662 §2.1); its launch check asks userinfo.
@Suite struct DiscoveredPublicClientTests {

    static let issuer = URL(string: "https://auth.example.com/o")!

    static let document = #"""
        {"issuer": "https://auth.example.com/o", "token_endpoint": "https://auth.example.com/o/token/",
         "revocation_endpoint": "https://auth.example.com/o/revoke_token/",
         "introspection_endpoint": "https://auth.example.com/o/introspect/",
         "userinfo_endpoint": "https://auth.example.com/o/userinfo/"}
        """#

    static let metadata = OAuth2ServerMetadata(
        issuer: issuer.absoluteString,
        tokenEndpoint: URL(string: "https://auth.example.com/o/token/")!,
        introspectionEndpoint: URL(string: "https://auth.example.com/o/introspect/")!,
        userInfoEndpoint: URL(string: "https://auth.example.com/o/userinfo/")!
    )

    /// The discovery document at OpenID Connect's URL; introspection refuses a client that does
    /// not authenticate (django-oauth-toolkit's 403); userinfo knows the token.
    static func server() -> StubTransport {
        StubTransport { request in
            switch request.url.absoluteString {
            case "https://auth.example.com/o/.well-known/openid-configuration":
                return .success(Fixture.json(200, document))
            case "https://auth.example.com/o/introspect/":
                return .success(Fixture.json(403, #"{"detail": "Authentication credentials were not provided."}"#))
            case "https://auth.example.com/o/userinfo/": return .success(Fixture.json(200, #"{"sub": "user-42"}"#))
            default: return .success(OAuth2HTTPResponse(statusCode: 404))
            }
        }
    }

    @Test func aPublicClientDoesNotAdoptTheAdvertisedIntrospectionEndpoint() {
        let configuration = OAuth2Configuration(metadata: Self.metadata, client: OAuth2Client(id: "app"))
        #expect(configuration.endpoints.introspection == nil)
        #expect(configuration.endpoints.userInfo == Self.metadata.userInfoEndpoint)
    }

    @Test func aConfidentialClientOrAnIntrospectionClientAdoptsIt() {
        let confidential = OAuth2Configuration(
            metadata: Self.metadata,
            client: OAuth2Client(id: "app", authentication: .clientSecretBasic(secret: "s3cret-value"))
        )
        #expect(confidential.endpoints.introspection == Self.metadata.introspectionEndpoint)
        let resourceServer = OAuth2Configuration(
            metadata: Self.metadata,
            client: OAuth2Client(id: "app"),
            introspectionClient: OAuth2Client(id: "api", authentication: .clientSecretPost(secret: "api-secret"))
        )
        #expect(resourceServer.endpoints.introspection == Self.metadata.introspectionEndpoint)
        #expect(resourceServer.introspectionClient?.id == "api")
    }

    @Test func aLaunchMakesNoIntrospectionRequestAndLogsNoMisconfiguration() async throws {
        let transport = Self.server()
        let clock = ManualClock()
        let service = try await OAuth2Service.discover(
            issuer: Self.issuer,
            client: OAuth2Client(id: "app"),
            transport: transport,
            clock: clock
        )
        let now = clock.now.timeIntervalSince1970
        let stored = ManagedSession(
            accessToken: Fixture.accessToken,
            refreshToken: Fixture.refreshToken,
            expiresAt: now + 3600,
            issuedAt: now,
            user: ManagedUser(identifier: "user-42")
        )
        let observer = LineObserver()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(session: stored),
            remote: service,
            clock: clock,
            configuration: .init(activationSignal: ManualActivationSignal(), observer: observer)
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        await provider.waitUntilIdle()
        await provider.observationsDelivered()

        #expect(handle.sessionStatus.isSignedIn)
        #expect(transport.requests.filter { $0.url.absoluteString == "https://auth.example.com/o/introspect/" }.isEmpty)
        #expect(
            transport.requests.filter { $0.url.absoluteString == "https://auth.example.com/o/userinfo/" }.count == 1,
            "the launch check"
        )
        #expect(observer.lines.contains("credentialChecked(authorized)"), "\(observer.lines)")
        #expect(!observer.lines.contains { $0.contains("failed") || $0.contains("misconfiguration") })
    }
}

/// Issue 27, item 2: a session records the client and issuer it was issued to; a manager
/// configured for another client neither sends its refresh token nor deletes it.
@Suite struct SessionOriginOAuth2Tests {

    @Test func theServiceNamesItsIssuerAndClient() async throws {
        let service = try await OAuth2Service.discover(
            issuer: DiscoveredPublicClientTests.issuer,
            client: OAuth2Client(id: "app"),
            transport: DiscoveredPublicClientTests.server(),
            clock: ManualClock()
        )
        #expect(
            service.sessionOrigin
                == SessionOrigin(
                    issuer: "https://auth.example.com/o",
                    clientID: "app",
                    server: "https://auth.example.com"
                )
        )
    }

    @Test func aSessionOfAnotherClientIsNeitherRefreshedNorDeleted() async throws {
        let transport = DiscoveredPublicClientTests.server()
        let clock = ManualClock()
        let service = try await OAuth2Service.discover(
            issuer: DiscoveredPublicClientTests.issuer,
            client: OAuth2Client(id: "app-v2"),
            transport: transport,
            clock: clock
        )
        let now = clock.now.timeIntervalSince1970
        // Due: a manager that used it would present its refresh token at once.
        let stored = ManagedSession(
            accessToken: Fixture.accessToken,
            refreshToken: Fixture.refreshToken,
            expiresAt: now + 5,
            issuedAt: now - 3600,
            user: ManagedUser(identifier: "user-42"),
            origin: SessionOrigin(issuer: "https://auth.example.com/o", clientID: "app")
        )
        let store = MockSessionStore(session: stored)
        let observer = LineObserver()
        let provider = ManagedSessionProvider(
            store: store,
            remote: service,
            clock: clock,
            configuration: .init(activationSignal: ManualActivationSignal(), observer: observer)
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        await handle.waitUntilLaunchSettled()

        #expect(handle.sessionStatus == .signedOut)
        #expect(transport.requests.filter { $0.url.path.hasSuffix("/token/") }.isEmpty, "the refresh token was sent")
        #expect(store.storedSession == stored)
        #expect(
            observer.lines.contains {
                $0.contains("storeFailed") && $0.contains(#"issued to client "app" at https://auth.example.com/o"#)
            },
            "\(observer.lines)"
        )
    }
}

/// Records each observation's line.
final class LineObserver: ManagedSessionObserver {
    private let recorded = ConcurrencySafeContainer<[String]>([])

    func observe(_ observation: ManagedSessionObservation) {
        recorded.withLock { $0.append(observation.description) }
    }

    var lines: [String] { recorded.withLock { $0 } }
}
