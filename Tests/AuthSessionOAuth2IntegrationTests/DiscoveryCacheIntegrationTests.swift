import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

extension RealServerTests {

    /// Issue 27, items 1 and 4, against the real server: a public client configured by discovery
    /// checks its credential without the introspection endpoint (which refuses it), and a relaunch
    /// with the server stopped starts from the metadata kept beside the session and serves the
    /// stored token.
    @Suite struct DiscoveryCacheOnTheRealServer {

        @Test(
            .enabled(
                if: RealServer.kind != .glewlwyd,
                "skipped against glewlwyd: it refuses a public client's password grant (403), the sign-in this test makes"
            )
        )
        func aRelaunchWithTheServerStoppedServesTheStoredToken() async throws {
            let server = try RealServer.require()
            let issuer = URL(string: server.issuer)!
            let client = OAuth2Client(id: try #require(server.clients["passwordPublic"]).clientId)
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("discovery-cache-\(UUID().uuidString)/store", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }

            // The first launch: discovery (kept), a sign-in, the credential check.
            let store = FileSessionStore(directory: folder)
            let service = try await OAuth2Service.discover(
                issuer: issuer,
                client: client,
                scope: ["openid", "read"],
                cache: FileDiscoveryCache(beside: store)
            )
            #expect(service.configuration.endpoints.introspection == nil, "a public client: not at introspection")
            let provider = ManagedSessionProvider(
                store: store,
                remote: service,
                configuration: .init(activationSignal: ManualActivationSignal())
            )
            let session = try await provider.signIn(
                with: .password(username: server.user.username, password: server.user.password)
            )
            #expect(try await service.credentialState(for: session) == .authorized)
            await provider.waitUntilIdle()

            // The relaunch, with the server stopped.
            try ServerScript.run(["stop"])
            defer { try? ServerScript.run(["restart"]) }
            let withoutCache = await #expect(throws: RemoteAuthError.self) {
                try await OAuth2ServerMetadata.discover(issuer: issuer)
            }
            #expect(withoutCache?.kind == .transient, "what every launch met before")
            let relaunchStore = FileSessionStore(directory: folder)
            let relaunched = try await OAuth2Service.discover(
                issuer: issuer,
                client: client,
                scope: ["openid", "read"],
                cache: FileDiscoveryCache(beside: relaunchStore)
            )
            #expect(relaunched.configuration == service.configuration)
            let relaunchedProvider = ManagedSessionProvider(
                store: relaunchStore,
                remote: relaunched,
                configuration: .init(activationSignal: ManualActivationSignal())
            )
            let handle = AuthSessionHandle(
                sessionProvider: relaunchedProvider,
                biometricAuthenticator: MockBiometricAuthenticator(),
                activationSignal: ManualActivationSignal(),
                clock: SystemClock()
            )
            #expect(handle.sessionStatus.isSignedIn)
            #expect(try await relaunchedProvider.validAccessToken() == session.accessToken)
            await relaunchedProvider.waitUntilIdle()
            #expect(relaunchedProvider.session?.accessToken == session.accessToken, "the session stays")
        }
    }
}
