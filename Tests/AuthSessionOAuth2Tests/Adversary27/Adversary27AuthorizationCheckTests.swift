import AuthSession
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport whose answer to the check (the GET) never comes until the calling task is
/// cancelled; it says when the GET arrived.
private final class HangingTransport: OAuth2HTTPTransport {
    let arrived = ConcurrencySafeContainer(0)
    private let waiters = ConcurrencySafeContainer<[CheckedContinuation<Void, Never>]>([])

    func send(_ request: URLRequest, maximumResponseSize: Int) async throws(RemoteAuthError) -> OAuth2HTTPResponse {
        arrived.withLock { $0 += 1 }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    waiters.withLock { $0.append(continuation) }
                }
            }
        } onCancel: {
            let all = waiters.withLock { list in
                defer { list = [] }
                return list
            }
            for waiter in all { waiter.resume() }
        }
        throw RemoteAuthError(.cancelled)
    }
}

/// The redirect URI and state an authorization URL carries.
private func parts(of url: URL) -> (uri: URL, state: String, nonce: String) {
    let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    return (
        items.first { $0.name == "redirect_uri" }?.value.flatMap(URL.init(string:)) ?? url,
        items.first { $0.name == "state" }?.value ?? "",
        items.first { $0.name == "nonce" }?.value ?? ""
    )
}

/// The check answers with `answer(url)`; the browser, if it opens, is recorded and fails.
private func run(
    _ answer: @escaping @Sendable (URL) -> OAuth2HTTPResponse
) async -> (opened: Bool, error: BrowserSignInError?, request: URL?) {
    let seen = ConcurrencySafeContainer<URL?>(nil)
    let transport = StubTransport { request in
        if request.method == "GET" {
            seen.withLock { $0 = request.url }
            return .success(answer(request.url))
        }
        return .success(Fixture.json(200, Fixture.tokenJSON()))
    }
    let service = OAuth2Service(configuration: Fixture.configuration, transport: transport)
    let opened = ConcurrencySafeContainer(false)
    struct Closed: Error {}
    do throws(BrowserSignInError) {
        _ = try await service.authorizeThroughLoopback(timeout: 60) { _ in
            opened.withLock { $0 = true }
            throw Closed()
        }
        return (opened.withLock { $0 }, nil, seen.withLock { $0 })
    } catch {
        return (opened.withLock { $0 }, error, seen.withLock { $0 })
    }
}

@Suite(.timeLimit(.minutes(2)))
struct Adversary27AuthorizationCheckTests {

    @Test("a sign-in cancelled while the check waits for the server: no browser opens, and it ends cancelled")
    func cancelledDuringTheCheck() async throws {
        let transport = HangingTransport()
        let service = OAuth2Service(configuration: Fixture.configuration, transport: transport)
        let opened = ConcurrencySafeContainer(false)
        let flow = Task { () -> BrowserSignInError? in
            do throws(BrowserSignInError) {
                _ = try await service.authorizeThroughLoopback(timeout: 60) { _ in opened.withLock { $0 = true } }
                return nil
            } catch {
                return error
            }
        }
        try await waitUntilTrue { transport.arrived.withLock { $0 } == 1 }
        flow.cancel()
        let error = await flow.value
        #expect(!opened.withLock { $0 }, "the browser opened for a sign-in the user had cancelled")
        #expect(error == .cancelled, "\(String(describing: error))")
    }

    @Test(
        "a refusal whose text echoes the request's state or nonce: no error rendering shows them"
    )
    func refusalEchoingSecrets() async throws {
        let shapes: [@Sendable (String, String) -> OAuth2HTTPResponse] = [
            { state, nonce in
                Fixture.json(
                    400,
                    #"{"error":"invalid_request","error_description":"bad state \#(state) for nonce \#(nonce)"}"#
                )
            },
            { state, _ in Fixture.json(400, #"{"error":"\#(state)","error_description":"x"}"#) },
            { state, _ in
                Fixture.json(401, #"{"error":"invalid_client","error_description":"state=\#(state)"}"#)
            },
        ]
        for shape in shapes {
            let secrets = ConcurrencySafeContainer<(String, String)>(("", ""))
            let outcome = await run { url in
                let (_, state, nonce) = parts(of: url)
                secrets.withLock { $0 = (state, nonce) }
                return shape(state, nonce)
            }
            let (state, nonce) = secrets.withLock { $0 }
            #expect(!outcome.opened)
            guard let error = outcome.error else {
                Issue.record("no error")
                continue
            }
            var dumped = ""
            dump(error, to: &dumped)
            for text in [
                "\(error)", String(reflecting: error), error.localizedDescription,
                error.recoverySuggestion ?? "", dumped,
            ] {
                #expect(!text.contains(state), "the state leaked: \(text)")
                #expect(nonce.isEmpty || !text.contains(nonce), "the nonce leaked: \(text)")
            }
        }
    }

    @Test(
        "an error redirect with the request's state whose description echoes the state: the description does not show it"
    )
    func redirectedErrorEchoingTheState() async throws {
        let stateSeen = ConcurrencySafeContainer("")
        let outcome = await run { url in
            let (uri, state, _) = parts(of: url)
            stateSeen.withLock { $0 = state }
            return OAuth2HTTPResponse(
                statusCode: 302,
                headers: [
                    "Location":
                        "\(uri.absoluteString)?error=invalid_scope&error_description=for+\(state)&state=\(state)"
                ]
            )
        }
        let state = stateSeen.withLock { $0 }
        #expect(!outcome.opened)
        let error = try #require(outcome.error)
        guard case .redirect(.server(code: "invalid_scope", _)) = error else {
            Issue.record("not the server's refusal: \(error)")
            return
        }
        #expect(!"\(error)".contains(state), "\(error)")
        #expect(!String(reflecting: error).contains(state))
    }

    @Test(
        "Location headers that are not the request's redirect URI (relative, another port, another host name, another path case) open the browser; the same URI with an upper-case scheme and host is the server's refusal"
    )
    func locationVariants() async throws {
        let notOurs: [@Sendable (URL, String) -> String] = [
            { uri, state in "\(uri.path)?error=access_denied&state=\(state)" },
            { uri, state in
                "http://127.0.0.1:\((uri.port ?? 0) == 65535 ? 1 : (uri.port ?? 0) + 1)\(uri.path)?error=access_denied&state=\(state)"
            },
            { uri, state in "http://localhost:\(uri.port ?? 0)\(uri.path)?error=access_denied&state=\(state)" },
            { uri, state in
                "http://127.0.0.1:\(uri.port ?? 0)\(uri.path.uppercased())?error=access_denied&state=\(state)"
            },
            { uri, state in "https://127.0.0.1:\(uri.port ?? 0)\(uri.path)?error=access_denied&state=\(state)" },
        ]
        for location in notOurs {
            let outcome = await run { url in
                let (uri, state, _) = parts(of: url)
                return OAuth2HTTPResponse(statusCode: 302, headers: ["Location": location(uri, state)])
            }
            #expect(
                outcome.opened,
                "a redirect elsewhere was taken for the server's refusal: \(String(describing: outcome.error))"
            )
        }
        let outcome = await run { url in
            let (uri, state, _) = parts(of: url)
            return OAuth2HTTPResponse(
                statusCode: 303,
                headers: ["location": "HTTP://127.0.0.1:\(uri.port ?? 0)\(uri.path)?error=access_denied&state=\(state)"]
            )
        }
        #expect(!outcome.opened)
        #expect(outcome.error == .redirect(.server(code: "access_denied", description: nil)))
    }
}

/// Waits until `condition` holds, yielding between looks; fails after `timeout` seconds.
private func waitUntilTrue(timeout: TimeInterval = 300, _ condition: @Sendable () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("the condition did not hold within \(timeout) s")
            throw CancellationError()
        }
        await Task.yield()
    }
}
