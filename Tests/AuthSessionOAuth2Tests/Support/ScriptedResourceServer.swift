import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An API that accepts the access tokens an ``InProcessAuthorizationServer`` says are live, as a
/// resource server would; the ``AuthorizedHTTPClient`` loader of the authorizer tests.
///
/// It answers 200 to a live token and 401 `Bearer error="invalid_token"` to any other, unless a
/// status was scripted. Tokens can be rejected at the API alone (the server still refreshes them),
/// and rejections held until the test lets them go, to order them against a refresh.
final class ScriptedResourceServer: Sendable {

    /// A request as the API received it.
    struct Received: Sendable {
        var token: String?
        var method: String?
        var body: Data?
        var hasBodyStream: Bool
    }

    private struct State {
        var received: [Received] = []
        var rejected: Set<String> = []
        var scriptedStatuses: [(status: Int, challenge: String?)] = []
        var holdsRejections = false
        var held: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var heldOrder: [UInt64] = []
        var nextID: UInt64 = 0
    }

    private let state = ConcurrencySafeContainer(State())
    let server: InProcessAuthorizationServer
    static let url = URL(string: "https://api.example.com/v1/profile")!

    init(server: InProcessAuthorizationServer) {
        self.server = server
    }

    /// Every request received, in arrival order.
    var received: [Received] { state.withLock { $0.received } }

    /// The tokens of every request received, in arrival order.
    var receivedTokens: [String?] { received.map(\.token) }

    /// How many rejections are held now.
    var heldCount: Int { state.withLock { $0.held.count } }

    /// Rejects `token` from now on, whatever the authorization server says of it.
    func reject(_ token: String) {
        state.withLock { _ = $0.rejected.insert(token) }
    }

    /// The next answers' statuses, in order, instead of the token check.
    func script(_ statuses: [(status: Int, challenge: String?)]) {
        state.withLock { $0.scriptedStatuses += statuses }
    }

    /// While `true`, a request to be rejected waits for ``releaseHeld(_:)`` before it is answered.
    func holdRejections(_ holds: Bool) {
        state.withLock { $0.holdsRejections = holds }
    }

    /// Answers `count` held rejections (all if `nil`), in the order they arrived, or shuffled with
    /// `generator`.
    func releaseHeld(_ count: Int? = nil, shuffledWith generator: inout SeededRandomNumberGenerator?) {
        let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            var order = state.heldOrder
            if generator != nil { order.shuffle(using: &generator!) }
            let chosen = order.prefix(count ?? order.count)
            state.heldOrder.removeAll { chosen.contains($0) }
            return chosen.compactMap { state.held.removeValue(forKey: $0) }
        }
        for continuation in released { continuation.resume() }
    }

    /// Answers every held rejection, in arrival order.
    func releaseAllHeld() {
        var none: SeededRandomNumberGenerator? = nil
        releaseHeld(nil, shuffledWith: &none)
    }

    /// The loader an ``AuthorizedHTTPClient`` sends through.
    var loader: AuthorizedHTTPClient.Loader {
        { [self] (request) throws(URLError) in try await answer(request) }
    }

    private func answer(_ request: URLRequest) async throws(URLError) -> (Data, URLResponse) {
        let header = request.value(forHTTPHeaderField: "Authorization")
        let token = header.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst("Bearer ".count)) : nil }
        let received = Received(
            token: token,
            method: request.httpMethod,
            body: request.httpBody,
            hasBodyStream: request.httpBodyStream != nil
        )
        let (scripted, isRejected, holds) = state.withLock { state in
            state.received.append(received)
            let scripted = state.scriptedStatuses.isEmpty ? nil : state.scriptedStatuses.removeFirst()
            return (scripted, token.map { state.rejected.contains($0) } ?? true, state.holdsRejections)
        }
        if let scripted {
            return Self.response(scripted.status, challenge: scripted.challenge)
        }
        if !isRejected, let token, server.isAccessTokenValid(token) {
            return Self.response(200, challenge: nil)
        }
        if holds {
            try await hold()
        }
        return Self.response(401, challenge: #"Bearer error="invalid_token""#)
    }

    /// Waits for ``releaseHeld(_:shuffledWith:)``, or the caller's cancellation.
    private func hold() async throws(URLError) {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isCancelled = Task.isCancelled
                state.withLock { state in
                    if !isCancelled {
                        state.held[id] = continuation
                        state.heldOrder.append(id)
                    }
                }
                if isCancelled { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                state.heldOrder.removeAll { $0 == id }
                return state.held.removeValue(forKey: id)
            }
            continuation?.resume()
        }
        if Task.isCancelled { throw URLError(.cancelled) }
    }

    private static func response(_ status: Int, challenge: String?) -> (Data, URLResponse) {
        let headers = challenge.map { ["WWW-Authenticate": $0] } ?? [:]
        let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        return (Data(status == 200 ? #"{"sub":"alice"}"#.utf8 : #"{"error":"invalid_token"}"#.utf8), response)
    }
}

/// A manager signed in to an in-process server on a manual clock, an API that trusts that server,
/// and a client between them.
final class AuthorizerHarness: Sendable {
    static let user = ManagedUser(identifier: "alice", name: "Alice")
    static let password = "correct horse battery"

    let clock = ManualClock()
    let server: InProcessAuthorizationServer
    let api: ScriptedResourceServer
    let provider: ManagedSessionProvider
    let handle: AuthSessionHandle<ManagedSessionProvider>
    let client: AuthorizedHTTPClient

    init(stored: ManagedSession? = nil, checksCredentialState: Bool = true) {
        server = InProcessAuthorizationServer(clock: clock)
        server.register(Self.user, password: Self.password)
        api = ScriptedResourceServer(server: server)
        provider = ManagedSessionProvider(
            store: InMemorySessionStore(session: stored),
            remote: server,
            retryPolicy: RetryPolicy(maximumRetries: 0, initialDelay: 0),
            clock: clock,
            configuration: .init(
                checksCredentialState: checksCredentialState,
                activationSignal: ManualActivationSignal()
            )
        )
        handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        client = AuthorizedHTTPClient(provider: provider, loader: api.loader)
    }

    /// Signs in and returns the access token.
    @discardableResult
    func signIn() async throws -> String {
        try await provider.signIn(with: .password(username: Self.user.identifier, password: Self.password))
            .accessToken
    }

    /// The request every test sends.
    static var request: URLRequest { URLRequest(url: ScriptedResourceServer.url) }
}

/// The error a safety net throws: what the test awaited did not happen in time.
struct SafetyNetExpired: Error {}

/// Runs `body`, failing with ``SafetyNetExpired`` after `seconds`: a safety net against a lost
/// wake-up, not a way to wait (the body waits on the thing itself).
func withSafetyNet<T: Sendable>(
    _ seconds: TimeInterval = 300,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    // Not a task group: a group waits for every child before it returns, so a body that ignores
    // cancellation (a continuation, `waitUntilIdle()`) would hold the net open for good. The body
    // runs in a task of its own; whichever ends first, the body or a dispatch timer, resumes the
    // one continuation, and on expiry the body's task is cancelled and left behind.
    let outcome = ConcurrencySafeContainer<CheckedContinuation<T, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        outcome.withLock { $0 = continuation }
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0.take() }?.resume(with: result)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard let continuation = outcome.withLock({ $0.take() }) else { return }
            task.cancel()
            continuation.resume(throwing: SafetyNetExpired())
        }
    }
}

/// Waits until `condition` holds, yielding between looks; throws ``SafetyNetExpired`` after
/// `timeout` seconds (a safety net: the condition is what the test waits on).
func waitUntil(timeout: TimeInterval = 300, _ condition: @Sendable () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw SafetyNetExpired() }
        await Task.yield()
    }
}
