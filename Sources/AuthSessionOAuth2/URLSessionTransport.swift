import AuthSession
import AuthSessionProviders
import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real ``OAuth2HTTPTransport``: URLSession, with the care Linux needs.
///
/// - Requests run as data tasks driven by a delegate, never as async `data(for:)`, whose
///   cancellation can crash or hang on Linux; cancelling the calling task cancels the data task.
/// - The body is read as it arrives and the task is cancelled as soon as it exceeds the limit
///   (or the announced `Content-Length` does), so a hostile server cannot make the client buffer
///   10 MB.
/// - The request's `timeoutInterval` bounds the whole exchange, not only the wait between two
///   packets: a server that trickles its answer, or holds it, fails with
///   `RemoteAuthError.Reason.timedOut` on time.
/// - Redirects are not followed; cookies and caches are off (an ephemeral configuration).
/// - A request made for a session manager's refresh is not handed to the network once that
///   refresh's lease lapsed (a process stopped on its way here, then resumed): another process
///   may have presented the same refresh token since. It fails as timed out, unsent.
///
/// All operations are thread-safe.
public final class URLSessionTransport: OAuth2HTTPTransport {

    private let session: URLSession
    private let delegate: TransportDelegate

    /// Creates a transport over a URLSession of its own.
    ///
    /// - Parameter configuration: The session's configuration; an ephemeral one by default. Its
    ///   cookies and cache are turned off.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        delegate = TransportDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` as a data task; see `OAuth2HTTPTransport.send(_:maximumResponseSize:)`.
    ///
    /// The caller is resumed exactly once: by the answer, by its cancellation, or by the timeout,
    /// whichever comes first; the data task is then cancelled if it still runs. A timeout that is
    /// not a positive finite number of seconds counts as 60, and one over a day as a day.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - maximumResponseSize: The largest body accepted, in bytes.
    /// - Returns: The answer.
    /// - Throws: `RemoteAuthError` for a network failure, a timeout, a body over the limit, or
    ///   cancellation.
    public func send(
        _ request: URLRequest,
        maximumResponseSize: Int
    ) async throws(RemoteAuthError)
        -> OAuth2HTTPResponse
    {
        if Task.isCancelled { throw RemoteAuthError(.cancelled) }
        // The refresh this request is made for, if it is one: once its lease lapsed (a process
        // stopped in here, then resumed), another process may present the same token, so this
        // request must not leave.
        let window = RefreshSendingWindow.current
        // The watchdog keeps the exact timeout; FoundationNetworking gets whole seconds (it cuts
        // a fraction down, and under a second fails at once), and the watchdog fires first.
        let timeout = Self.clampedTimeout(request.timeoutInterval)
        var request = request
        request.timeoutInterval = max(1, timeout.rounded(.up))
        let task = session.dataTask(with: request)
        let call = PendingCall(limit: max(0, maximumResponseSize))
        delegate.register(call, for: task)
        defer { delegate.unregister(task) }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<OAuth2HTTPResponse, RemoteAuthError>, Never>) in
                guard call.attach(continuation) else {
                    // Cancelled before it started: the caller has its answer; never send it.
                    task.cancel()
                    return
                }
                if let window, !window.isOpen {
                    _ = call.finish(.failure(RemoteAuthError(.timedOut)))
                    task.cancel()
                    return
                }
                task.resume()
                // Weak: a finished call, and the answer it held, must not live on until the timer.
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak call, weak task] in
                    if call?.finish(.failure(RemoteAuthError(.timedOut))) == true {
                        task?.cancel()
                    }
                }
            }
        } onCancel: {
            if call.finish(.failure(RemoteAuthError(.cancelled))) {
                task.cancel()
            }
        }
        return try result.get()
    }

    /// A request timeout the platform can take: positive, finite, at most a day.
    static func clampedTimeout(_ timeout: TimeInterval) -> TimeInterval {
        guard timeout > 0, timeout.isFinite else { return 60 }
        return min(timeout, 86_400)
    }
}

/// One request's answer as it arrives, and the caller waiting for it: resumed exactly once, by
/// whichever of the answer, a cancellation or the timeout finishes the call first.
private final class PendingCall: Sendable {

    private struct State {
        var continuation: CheckedContinuation<Result<OAuth2HTTPResponse, RemoteAuthError>, Never>?
        var isFinished = false
        /// The outcome, kept only while no caller is attached to take it.
        var outcome: Result<OAuth2HTTPResponse, RemoteAuthError>?
        var response: HTTPURLResponse?
        var body = Data()
    }

    let limit: Int
    private let state = ConcurrencySafeContainer(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Gives the call its waiting caller; `false` (and the caller resumed at once) when the call
    /// has already finished.
    func attach(_ continuation: CheckedContinuation<Result<OAuth2HTTPResponse, RemoteAuthError>, Never>) -> Bool {
        let outcome = state.withLock { state -> Result<OAuth2HTTPResponse, RemoteAuthError>? in
            if state.isFinished {
                defer { state.outcome = nil }
                return state.outcome ?? .failure(RemoteAuthError(.cancelled))
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
    func finish(_ outcome: Result<OAuth2HTTPResponse, RemoteAuthError>) -> Bool {
        let continuation = state.withLock {
            state -> CheckedContinuation<Result<OAuth2HTTPResponse, RemoteAuthError>, Never>?? in
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

    /// Keeps the response head; `false` when its announced length is over the limit.
    func receive(_ response: URLResponse) -> Bool {
        state.withLock { $0.response = response as? HTTPURLResponse }
        return response.expectedContentLength <= Int64(limit)
    }

    /// Appends body bytes; `false` once the body is over the limit.
    func append(_ data: Data) -> Bool {
        state.withLock { state in
            guard !state.isFinished else { return true }
            guard state.body.count + data.count <= limit else { return false }
            state.body.append(data)
            return true
        }
    }

    /// Finishes the call from the task's completion.
    func complete(error: (any Error)?) {
        let (response, body) = state.withLock { ($0.response, $0.body) }
        if let error {
            let code = (error as? URLError)?.code ?? URLError.Code.unknown
            switch code {
            case .timedOut: finish(.failure(RemoteAuthError(.timedOut)))
            case .cancelled: finish(.failure(RemoteAuthError(.cancelled)))
            default: finish(.failure(RemoteAuthError(.network(code: code.rawValue))))
            }
            return
        }
        guard let response else {
            finish(.failure(RemoteAuthError(.invalidResponse("no HTTP response"))))
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name.lowercased()] = value
            }
        }
        finish(.success(OAuth2HTTPResponse(statusCode: response.statusCode, headers: headers, body: body)))
    }
}

/// The delegate of a ``URLSessionTransport``'s session: routes each task's events to its call.
private final class TransportDelegate: NSObject, URLSessionDataDelegate, Sendable {

    private let calls = ConcurrencySafeContainer<[Int: PendingCall]>([:])

    func register(_ call: PendingCall, for task: URLSessionTask) {
        calls.withLock { $0[task.taskIdentifier] = call }
    }

    func unregister(_ task: URLSessionTask) {
        calls.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
    }

    private func call(for task: URLSessionTask) -> PendingCall? {
        calls.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let call = call(for: dataTask), !call.receive(response) else {
            completionHandler(.allow)
            return
        }
        // FoundationNetworking ignores `.cancel` here: finish the call and cancel the task too.
        call.finish(.failure(RemoteAuthError(.responseTooLarge(limit: call.limit))))
        completionHandler(.cancel)
        dataTask.cancel()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let call = call(for: dataTask), !call.append(data) else { return }
        call.finish(.failure(RemoteAuthError(.responseTooLarge(limit: call.limit))))
        dataTask.cancel()
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        call(for: task)?.complete(error: error)
    }
}
