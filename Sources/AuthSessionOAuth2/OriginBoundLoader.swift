import AuthSession
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ``AuthorizedHTTPClient``'s way to `URLSession`: a session of its own, made with the app
/// session's configuration, whose delegate never lets a signed request follow a redirect out of
/// its origin.
///
/// URLSession copies a request's headers, `Authorization` included, onto the request it follows a
/// redirect with, whatever host the redirect names, and a completion-handler data task of the
/// app's session cannot be given a delegate of its own before iOS 15. So the signed requests go
/// through this session instead: same configuration (headers, timeouts, cookies, cache, proxies,
/// protocol classes), its own delegate.
///
/// - A redirect within the original request's origin (scheme, host and port) is followed, with
///   the token, as URLSession and browsers do.
/// - A redirect anywhere else (another host, another port, another scheme, `https` to `http`) is
///   not followed: the 3xx comes back as the answer, and the token is sent nowhere else.
///
/// Tasks are driven by the delegate (never async `data(for:)`, whose cancellation can crash or
/// hang on Linux, and never a completion handler, with which Linux's URLSession follows redirects
/// without asking the delegate). Cancelling the caller cancels the task.
///
/// All operations are thread-safe.
final class OriginBoundLoader: Sendable {

    private let session: URLSession
    private let delegate: OriginBoundDelegate

    /// Creates a loader over a session with `configuration`.
    init(configuration: URLSessionConfiguration) {
        delegate = OriginBoundDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and returns the answer: the final one after same-origin redirects, or the
    /// 3xx of a redirect out of the origin.
    func load(_ request: URLRequest) async throws(URLError) -> (Data, URLResponse) {
        if Task.isCancelled { throw URLError(.cancelled) }
        let task = session.dataTask(with: request)
        let call = OriginBoundCall()
        delegate.register(call, for: task)
        defer { delegate.unregister(task) }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<(Data, URLResponse), URLError>, Never>) in
                guard call.attach(continuation) else {
                    // Cancelled before it started: the caller has its answer; never send it.
                    task.cancel()
                    return
                }
                task.resume()
            }
        } onCancel: {
            if call.finish(.failure(URLError(.cancelled))) {
                task.cancel()
            }
        }
        return try result.get()
    }

    /// Whether a request first sent to `original` may follow a redirect to `target` with its
    /// token: only within the same origin (scheme, host and port, the scheme's default port
    /// standing for none), compared case-insensitively.
    static func mayFollowRedirect(from original: URL?, to target: URL?) -> Bool {
        guard let original, let target,
            let scheme = original.scheme?.lowercased(), scheme == target.scheme?.lowercased(),
            let host = original.host?.lowercased(), host == target.host?.lowercased()
        else { return false }
        let defaultPort: Int? =
            switch scheme {
            case "https": 443
            case "http": 80
            default: nil
            }
        return (original.port ?? defaultPort) == (target.port ?? defaultPort)
    }
}

/// One request's answer as it arrives, and the caller waiting for it: resumed exactly once, by the
/// task's completion or the caller's cancellation, whichever comes first.
private final class OriginBoundCall: Sendable {

    private struct State {
        var continuation: CheckedContinuation<Result<(Data, URLResponse), URLError>, Never>?
        var isFinished = false
        /// The outcome, kept only while no caller is attached to take it.
        var outcome: Result<(Data, URLResponse), URLError>?
        var response: URLResponse?
        var body = Data()
    }

    private let state = ConcurrencySafeContainer(State())

    /// Gives the call its waiting caller; `false` (and the caller resumed at once) when the call
    /// has already finished.
    func attach(_ continuation: CheckedContinuation<Result<(Data, URLResponse), URLError>, Never>) -> Bool {
        let outcome = state.withLock { state -> Result<(Data, URLResponse), URLError>? in
            if state.isFinished {
                defer { state.outcome = nil }
                return state.outcome ?? .failure(URLError(.cancelled))
            }
            state.continuation = continuation
            return nil
        }
        guard let outcome else { return true }
        continuation.resume(returning: outcome)
        return false
    }

    /// Finishes the call with `outcome` unless it has finished already; `true` if this did.
    @discardableResult
    func finish(_ outcome: Result<(Data, URLResponse), URLError>) -> Bool {
        let continuation = state.withLock {
            state -> CheckedContinuation<Result<(Data, URLResponse), URLError>, Never>?? in
            guard !state.isFinished else { return .none }
            state.isFinished = true
            state.body = Data()
            guard let continuation = state.continuation else {
                state.outcome = outcome
                return .some(nil)
            }
            state.continuation = nil
            return .some(continuation)
        }
        guard let continuation else { return false }
        continuation?.resume(returning: outcome)
        return true
    }

    /// Keeps the response head, dropping the body of any response before it (a followed
    /// redirect's).
    func receive(_ response: URLResponse) {
        state.withLock { state in
            state.response = response
            state.body = Data()
        }
    }

    /// Appends body bytes.
    func append(_ data: Data) {
        state.withLock { state in
            guard !state.isFinished else { return }
            state.body.append(data)
        }
    }

    /// Finishes the call from the task's completion.
    func complete(error: (any Error)?) {
        let (response, body) = state.withLock { ($0.response, $0.body) }
        if let error {
            finish(.failure(error as? URLError ?? URLError(.unknown)))
        } else if let response {
            finish(.success((body, response)))
        } else {
            finish(.failure(URLError(.badServerResponse)))
        }
    }
}

/// The delegate of an ``OriginBoundLoader``'s session: routes each task's events to its call and
/// refuses every redirect out of the original request's origin.
private final class OriginBoundDelegate: NSObject, URLSessionDataDelegate, Sendable {

    private let calls = ConcurrencySafeContainer<[Int: OriginBoundCall]>([:])

    func register(_ call: OriginBoundCall, for task: URLSessionTask) {
        calls.withLock { $0[task.taskIdentifier] = call }
    }

    func unregister(_ task: URLSessionTask) {
        calls.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
    }

    private func call(for task: URLSessionTask) -> OriginBoundCall? {
        calls.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        call(for: dataTask)?.receive(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        call(for: dataTask)?.append(data)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // The original request, not the current one: a chain of redirects never leaves the origin
        // the request was signed for.
        if OriginBoundLoader.mayFollowRedirect(from: task.originalRequest?.url, to: request.url) {
            completionHandler(request)
        } else {
            completionHandler(nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        call(for: task)?.complete(error: error)
    }
}
