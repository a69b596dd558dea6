import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
extension RealServerTests {

    /// Faults between the client and the real server, through `FaultProxy`: each one is
    /// transient, none is terminal, and the session refreshes once the fault clears.
    ///
    /// Faults split in two. Those that stop a request before the server (refused connection,
    /// a 5xx from a proxy, a stopped server) leave the refresh token unspent, so the same
    /// session refreshes afterwards. Those that lose the *answer* (a reset, a truncated body,
    /// a timeout) come after the server acted: tried on a sign-in they cost nothing, and the
    /// session refreshes afterwards; tried on a rotating refresh they spend the token, which
    /// ``lostRotationAnswerSpendsTheToken()`` shows as the honest limit of any client.
    @Suite struct Faults {

        private func proxy() throws -> FaultProxy {
            try FaultProxy(upstreamPort: UInt16(try RealServer.require().port))
        }

        private func session(_ service: OAuth2Service) async throws -> String {
            try #require(try await RealServer.signIn(service, scope: ["read"]).refreshToken)
        }

        @Test func faultsBeforeTheServerLeaveTheSessionRefreshable() async throws {
            let proxy = try proxy()
            defer { proxy.stop() }
            let service = try RealServer.service(role: "password", through: proxy.url(forUpstream:))
            let refreshToken = try await session(service)
            let html = Data("<html><body><h1>Server Error (500)</h1></body></html>".utf8)
            let faults: [(FaultProxy.Fault, RemoteAuthError.Reason)] = [
                (
                    .respond(
                        status: 500,
                        reason: "Internal Server Error",
                        headers: ["Content-Type": "text/html"],
                        body: html
                    ),
                    .httpStatus(500)
                ),
                (
                    .respond(status: 503, reason: "Service Unavailable", headers: ["Retry-After": "7"], body: Data()),
                    .httpStatus(503)
                ),
                (.refuseConnections, .network(code: URLError.Code.cannotConnectToHost.rawValue)),
            ]
            for (fault, reason) in faults {
                proxy.setFault(fault)
                let error = await #expect(throws: RemoteAuthError.self) {
                    try await service.refresh(refreshToken, scope: nil)
                }
                #expect(error?.reason == reason)
                #expect(error?.kind == .transient)
                // A 500 may come after a server committed, so the client must assume it did; here
                // the proxy made it up, and the session goes on either way.
                #expect(error?.isOutcomeUncertain == (reason == .httpStatus(500)))
                if case .httpStatus(503) = reason {
                    #expect(error?.retryAfter == .seconds(7))
                }
                proxy.setFault(nil)
            }
            let refreshed = try await service.refresh(refreshToken, scope: nil)
            #expect(refreshed.refreshToken != nil)
            #expect(
                try RealServer.tokenRequests().filter { $0.refreshTokenSHA256 == logDigest(refreshToken) }.count == 1
            )
        }

        @Test func serverStoppedThenRestarted() async throws {
            let service = try RealServer.service(role: "password")
            let refreshToken = try await session(service)
            try ServerScript.run(["stop"])
            let refused = await #expect(throws: RemoteAuthError.self) {
                try await service.refresh(refreshToken, scope: nil)
            }
            try ServerScript.run(["restart"])
            #expect(refused?.reason == .network(code: URLError.Code.cannotConnectToHost.rawValue))
            #expect(refused?.kind == .transient)
            let refreshed = try await service.refresh(refreshToken, scope: nil)
            #expect(refreshed.refreshToken != nil)
        }

        @Test func faultsAfterTheServerAreTransient() async throws {
            let proxy = try proxy()
            defer { proxy.stop() }
            let service = try RealServer.service(role: "password", through: proxy.url(forUpstream:), timeout: 1)
            let refreshToken = try await session(service)
            let faults: [(FaultProxy.Fault, RemoteAuthError.Reason)] = [
                (.delay(seconds: 3), .timedOut),
                (.resetMidResponse, .network(code: URLError.Code.networkConnectionLost.rawValue)),
                // libcurl reports a body cut short as URLError.unknown ("transfer closed with N bytes remaining").
                (.truncateBody, .network(code: URLError.Code.unknown.rawValue)),
            ]
            for (fault, reason) in faults {
                proxy.setFault(fault, count: 1)
                let error = await #expect(throws: RemoteAuthError.self) { try await RealServer.signIn(service) }
                #expect(error?.reason == reason)
                #expect(error?.kind == .transient)
                #expect(error?.isOutcomeUncertain == true, "the server acted: a rotating refresh must not be retried")
            }
            let refreshed = try await service.refresh(refreshToken, scope: nil)
            #expect(refreshed.refreshToken != nil)
        }

        /// The limit no client can pass alone: the server rotated, the answer was lost, the old
        /// token is spent. The error is transient (the client cannot know), and only the
        /// server's grace period, or a client that never loses the answer, saves the session.
        @Test func lostRotationAnswerSpendsTheToken() async throws {
            let proxy = try proxy()
            defer { proxy.stop() }
            let service = try RealServer.service(role: "password", through: proxy.url(forUpstream:))
            let refreshToken = try await session(service)
            proxy.setFault(.resetMidResponse, count: 1)
            let lost = await #expect(throws: RemoteAuthError.self) {
                try await service.refresh(refreshToken, scope: nil)
            }
            #expect(lost?.kind == .transient)
            #expect(lost?.isOutcomeUncertain == true)
            let presented = try RealServer.tokenRequests().filter { $0.refreshTokenSHA256 == logDigest(refreshToken) }
            #expect(presented.map(\.status) == [200], "the server rotated before the answer was lost")
            if try RealServer.require().refreshGracePeriodSeconds == 0 {
                let reuse = await #expect(throws: RemoteAuthError.self) {
                    try await service.refresh(refreshToken, scope: nil)
                }
                #expect(reuse?.serverCode == "invalid_grant")
            }
        }
    }
}
#endif
