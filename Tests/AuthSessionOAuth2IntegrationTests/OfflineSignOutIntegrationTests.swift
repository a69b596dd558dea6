import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

/// Issue 27: a sign-out while the server cannot be reached is revoked once it can, checked at the
/// real server.
extension RealServerTests {
    @Suite struct OfflineSignOutIntegrationTests {

        /// Records each observation's line.
        final class Lines: ManagedSessionObserver {
            private let recorded = ConcurrencySafeContainer<[String]>([])
            func observe(_ observation: ManagedSessionObservation) {
                recorded.withLock { $0.append(observation.description) }
            }
            var all: [String] { recorded.withLock { $0 } }
        }

        /// A launch of the tool: a manager over `folder`'s store and `service`, started by its
        /// handle, the launch settled.
        private func launch(
            _ folder: URL,
            _ service: OAuth2Service,
            _ lines: Lines
        ) async -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
            let provider = ManagedSessionProvider(
                store: FileSessionStore(directory: folder),
                remote: service,
                configuration: .init(activationSignal: ManualActivationSignal(), observer: lines)
            )
            let handle = AuthSessionHandle(sessionProvider: provider)
            await handle.waitUntilLaunchSettled()
            return (provider, handle)
        }

        @Test func aSignOutWhileTheServerIsUnreachableIsRevokedAtTheNextLaunch() async throws {
            let server = try RealServer.require()
            let proxy = try FaultProxy(upstreamPort: UInt16(server.port))
            defer { proxy.stop() }
            let throughProxy = try RealServer.service(
                role: "password",
                scope: ["read"],
                through: proxy.url(forUpstream:)
            )
            let direct = try RealServer.service(role: "password", scope: ["read"])
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("offline-sign-out-\(UUID().uuidString)", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: folder) }

            let firstLines = Lines()
            let (first, firstHandle) = await launch(folder, throughProxy, firstLines)
            let session = try await first.signIn(
                with: .password(username: server.user.username, password: server.user.password)
            )
            let refreshToken = try #require(session.refreshToken)

            // The server goes out of reach; the person signs out.
            proxy.setFault(.refuseConnections)
            try first.signout(with: nil)
            await first.waitUntilIdle()
            #expect(firstLines.all.contains { $0.hasPrefix("revocation(refresh_token, pending(") }, "\(firstLines.all)")
            // Still live at the server: its access token is active.
            #expect(try await direct.introspect(session.accessToken, kind: .accessToken).isActive)
            _ = firstHandle

            // The server is back; the tool is launched again.
            proxy.setFault(nil)
            let secondLines = Lines()
            let (second, secondHandle) = await launch(folder, throughProxy, secondLines)
            await second.waitUntilIdle()
            #expect(second.session == nil)
            #expect(secondLines.all.contains("revocation(refresh_token, revoked(retry))"), "\(secondLines.all)")
            #expect(await second.revokePendingTokens() == 0)
            _ = secondHandle

            // At the server: the refresh token is dead, and its access token with it.
            let refused = await #expect(throws: RemoteAuthError.self) {
                try await direct.refresh(refreshToken, scope: nil)
            }
            #expect(refused?.serverCode == "invalid_grant")
            #expect(try await direct.introspect(session.accessToken, kind: .accessToken).isActive == false)
            let revocations = proxy.requests.filter { $0.method == "POST" && $0.path.contains("revoke") }
            #expect(
                revocations.contains { $0.formParameters["token"] == refreshToken },
                "the retry went to the server's revocation endpoint"
            )
        }
    }

    /// Issue 27, item 6, against the real server: a request its authorization endpoint refuses
    /// fails before the browser opens; one it accepts (it sends everyone to its sign-in page
    /// first) opens the browser.
    @Suite struct AuthorizationRequestCheckIntegrationTests {

        @Test func aMistypedAuthorizationEndpointFailsAtOnceAndTheRealOneOpensTheBrowser() async throws {
            var configuration = try RealServer.service(role: "authorizationCodeConsent").configuration
            let real = try #require(configuration.endpoints.authorization)
            configuration.endpoints.authorization = real.deletingLastPathComponent()
                .appendingPathComponent("authorise", isDirectory: true)
            let mistyped = OAuth2Service(configuration: configuration)
            let opened = ConcurrencySafeContainer(false)
            let error = await #expect(throws: BrowserSignInError.self) {
                try await mistyped.authorizeThroughLoopback(timeout: 300) { _ in opened.withLock { $0 = true } }
            }
            #expect(!opened.withLock { $0 }, "the browser opened for a refused request")
            guard case .request(let refusal)? = error else {
                Issue.record("not a refusal: \(String(describing: error))")
                return
            }
            #expect(refusal.reason == .httpStatus(404))

            let service = try RealServer.service(role: "authorizationCodeConsent")
            let request = try service.authorizationRequest(redirectURI: URL(string: "http://127.0.0.1:9/callback")!)
            await #expect(throws: Never.self) { try await service.checkAuthorizationRequest(request) }
        }
    }
}
