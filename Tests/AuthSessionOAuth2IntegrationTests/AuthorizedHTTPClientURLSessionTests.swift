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
/// The request authorizer's `URLSession` path over real sockets, against answers `FaultProxy` makes
/// up, with a manager signed in to an in-process server (no real server needed).
@Suite struct AuthorizedHTTPClientURLSessionTests {

    private static let user = ManagedUser(identifier: "alice", name: "Alice")

    /// A manager signed in to an in-process server, and its handle (kept alive by the caller).
    private func signedIn() async throws -> (
        ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>, InProcessAuthorizationServer
    ) {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(Self.user, password: "pw")
        let (provider, handle) = try await makeSignedInManager(
            remote: server,
            clock: clock,
            username: Self.user.identifier,
            password: "pw"
        )
        return (provider, handle, server)
    }

    @Test("a 401 over URLSession: one refresh, the retry carries the new token")
    func rejectionIsRetriedOverURLSession() async throws {
        let (provider, handle, server) = try await signedIn()
        defer { withExtendedLifetime(handle) {} }
        // The API: a proxy that answers 200 to anything, behind one that rejects the first request.
        let api = try FaultProxy(upstreamPort: 9)
        defer { api.stop() }
        api.setFault(.respond(status: 200, reason: "OK", headers: [:], body: Data("ok".utf8)))
        let proxy = try FaultProxy(upstreamPort: api.port)
        defer { proxy.stop() }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let client = AuthorizedHTTPClient(provider: provider, session: session)
        let old = try #require(provider.session?.accessToken)
        proxy.setFault(
            .respond(
                status: 401,
                reason: "Unauthorized",
                headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#],
                body: Data()
            ),
            count: 1
        )
        let url = URL(string: "http://127.0.0.1:\(proxy.port)/v1/profile")!

        let (data, response) = try await withSafetyNet { try await client.data(for: URLRequest(url: url)) }

        #expect(response.statusCode == 200)
        #expect(data == Data("ok".utf8))
        #expect(server.refreshCount == 1)
        let new = try #require(provider.session?.accessToken)
        #expect(proxy.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer \(old)", "Bearer \(new)"])
    }

    @Test("a caller cancelled while URLSession waits for the answer: cancelled at once")
    func cancellationEndsTheDataTask() async throws {
        let (provider, handle, _) = try await signedIn()
        defer { withExtendedLifetime(handle) {} }
        let proxy = try FaultProxy(upstreamPort: 9)
        defer { proxy.stop() }
        // Held for fifteen minutes: only the cancellation ends the call long before.
        proxy.setFault(.delay(seconds: 900))
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let client = AuthorizedHTTPClient(provider: provider, session: session)
        let url = URL(string: "http://127.0.0.1:\(proxy.port)/v1/profile")!
        let request = Task { try await client.data(for: URLRequest(url: url)) }
        let deadline = Date().addingTimeInterval(60)
        while proxy.requests.isEmpty, Date() < deadline { await Task.yield() }
        #expect(proxy.requests.count == 1)

        let cancelled = Date()
        request.cancel()
        let result = try await withSafetyNet { await request.result }

        guard case .failure(let error as AuthorizedRequestError) = result, case .cancelled = error else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        #expect(Date().timeIntervalSince(cancelled) < 600, "not the proxy's 900 s delay")
    }
}
#endif
