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
/// The token never follows a redirect to another origin, whatever `URLSession` the app passes:
/// over real sockets, with 127.0.0.2 standing for another host.
@Suite struct AuthorizedHTTPClientRedirectTests {

    private static let user = ManagedUser(identifier: "alice", name: "Alice")

    /// The kinds of `URLSession` an app passes.
    enum AppSession: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case shared
        case ephemeral
        case withFollowingDelegate

        var testDescription: String { rawValue }

        func make() -> URLSession {
            switch self {
            case .shared: URLSession.shared
            case .ephemeral: URLSession(configuration: .ephemeral)
            case .withFollowingDelegate:
                URLSession(configuration: .ephemeral, delegate: FollowsEveryRedirect(), delegateQueue: nil)
            }
        }
    }

    /// A manager signed in to an in-process server, and its handle (kept alive by the caller).
    private func signedIn() async throws -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(Self.user, password: "pw")
        return try await makeSignedInManager(
            remote: server,
            clock: clock,
            username: Self.user.identifier,
            password: "pw"
        )
    }

    /// Sends one request to an API that answers `302 Location: target(elsewhere)` once, where
    /// `elsewhere` answers 200 to anything; returns the answer and what each listener received.
    private func redirect(
        with appSession: AppSession,
        elsewhereAddress: String,
        target: @escaping @Sendable (_ elsewherePort: UInt16, _ apiPort: UInt16) -> String
    ) async throws -> (
        response: HTTPURLResponse, api: [FaultProxy.RecordedRequest], elsewhere: [FaultProxy.RecordedRequest],
        token: String
    ) {
        let (provider, handle) = try await signedIn()
        defer { withExtendedLifetime(handle) {} }
        let elsewhere = try FaultProxy(upstreamPort: 9, listeningOn: elsewhereAddress)
        defer { elsewhere.stop() }
        elsewhere.setFault(.respond(status: 200, reason: "OK", headers: [:], body: Data("collected".utf8)))
        let api = try FaultProxy(upstreamPort: 9)
        defer { api.stop() }
        api.setFault(
            .respond(
                status: 302,
                reason: "Found",
                headers: ["Location": target(elsewhere.port, api.port)],
                body: Data()
            ),
            count: 1
        )
        let session = appSession.make()
        defer { if appSession != .shared { session.finishTasksAndInvalidate() } }
        let client = AuthorizedHTTPClient(provider: provider, session: session)
        let token = try #require(provider.session?.accessToken)
        let url = URL(string: "http://127.0.0.1:\(api.port)/v1/profile")!

        let (_, response) = try await withSafetyNet { try await client.data(for: URLRequest(url: url)) }

        // The elsewhere listener after the API's: an answer already returned was sent before.
        return (response, api.requests, elsewhere.requests, token)
    }

    @Test(
        "a redirect to another host over http: the 302 comes back, and the other host never sees the token",
        arguments: AppSession.allCases
    )
    func redirectToAnotherHostIsNotFollowed(_ appSession: AppSession) async throws {
        let outcome = try await redirect(with: appSession, elsewhereAddress: "127.0.0.2") { port, _ in
            "http://127.0.0.2:\(port)/collect"
        }

        #expect(outcome.response.statusCode == 302)
        #expect(outcome.api.map { $0.value(forHeader: "Authorization") } == ["Bearer \(outcome.token)"])
        #expect(outcome.elsewhere.allSatisfy { $0.value(forHeader: "Authorization") == nil })
        #expect(outcome.elsewhere.isEmpty, "the redirect is returned, not followed")
    }

    @Test(
        "a redirect to the same host on another port (another origin): the 302 comes back, without the token",
        arguments: AppSession.allCases
    )
    func redirectToAnotherPortIsNotFollowed(_ appSession: AppSession) async throws {
        let outcome = try await redirect(with: appSession, elsewhereAddress: "127.0.0.1") { port, _ in
            "http://127.0.0.1:\(port)/collect"
        }

        #expect(outcome.response.statusCode == 302)
        #expect(outcome.elsewhere.isEmpty)
    }

    @Test(
        "a redirect within the request's origin is followed, and the token goes with it",
        arguments: AppSession.allCases
    )
    func redirectWithinTheOriginIsFollowed(_ appSession: AppSession) async throws {
        let (provider, handle) = try await signedIn()
        defer { withExtendedLifetime(handle) {} }
        let backend = try FaultProxy(upstreamPort: 9)
        defer { backend.stop() }
        backend.setFault(.respond(status: 200, reason: "OK", headers: [:], body: Data("moved".utf8)))
        let api = try FaultProxy(upstreamPort: backend.port)
        defer { api.stop() }
        api.setFault(
            .respond(status: 302, reason: "Found", headers: ["Location": "/v2/profile"], body: Data()),
            count: 1
        )
        let session = appSession.make()
        defer { if appSession != .shared { session.finishTasksAndInvalidate() } }
        let client = AuthorizedHTTPClient(provider: provider, session: session)
        let token = try #require(provider.session?.accessToken)
        let url = URL(string: "http://127.0.0.1:\(api.port)/v1/profile")!

        let (data, response) = try await withSafetyNet { try await client.data(for: URLRequest(url: url)) }

        #expect(response.statusCode == 200)
        #expect(data == Data("moved".utf8))
        #expect(api.requests.map(\.path) == ["/v1/profile", "/v2/profile"])
        #expect(
            api.requests.map { $0.value(forHeader: "Authorization") } == Array(repeating: "Bearer \(token)", count: 2)
        )
    }
}

/// An app's delegate that follows every redirect, as URLSession does with no delegate.
private final class FollowsEveryRedirect: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(request)
    }
}
#endif
