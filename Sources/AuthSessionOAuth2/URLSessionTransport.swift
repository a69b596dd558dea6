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

    /// Sends `request` as a data task; see ``OAuth2HTTPTransport/send(_:maximumResponseSize:)``.
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
        let task = session.dataTask(with: request)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<OAuth2HTTPResponse, RemoteAuthError>, Never>) in
                delegate.start(task, limit: maximumResponseSize, continuation: continuation)
                task.resume()
                let timeout = request.timeoutInterval
                if timeout > 0, timeout.isFinite {
                    let delegate = self.delegate
                    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                        if delegate.markTimedOut(task) {
                            task.cancel()
                        }
                    }
                }
                // A cancellation that came before the task was registered found nothing to cancel.
                if Task.isCancelled {
                    task.cancel()
                }
            }
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }
}

/// The delegate of a ``URLSessionTransport``'s session: collects each task's answer and resumes
/// its caller exactly once.
private final class TransportDelegate: NSObject, URLSessionDataDelegate, Sendable {

    private struct Exchange {
        var continuation: CheckedContinuation<Result<OAuth2HTTPResponse, RemoteAuthError>, Never>
        var limit: Int
        var response: HTTPURLResponse?
        var body = Data()
        var exceededLimit = false
        var timedOut = false
    }

    private let exchanges = ConcurrencySafeContainer<[Int: Exchange]>([:])

    func start(
        _ task: URLSessionTask,
        limit: Int,
        continuation: CheckedContinuation<Result<OAuth2HTTPResponse, RemoteAuthError>, Never>
    ) {
        exchanges.withLock { $0[task.taskIdentifier] = Exchange(continuation: continuation, limit: limit) }
    }

    /// Marks the exchange of `task` as timed out; `false` when it has already ended.
    func markTimedOut(_ task: URLSessionTask) -> Bool {
        exchanges.withLock { exchanges in
            guard exchanges[task.taskIdentifier] != nil else { return false }
            exchanges[task.taskIdentifier]?.timedOut = true
            return true
        }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let tooLarge = exchanges.withLock { exchanges -> Bool in
            guard var exchange = exchanges[dataTask.taskIdentifier] else { return false }
            exchange.response = response as? HTTPURLResponse
            exchange.exceededLimit = response.expectedContentLength > Int64(exchange.limit)
            exchanges[dataTask.taskIdentifier] = exchange
            return exchange.exceededLimit
        }
        completionHandler(tooLarge ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = exchanges.withLock { exchanges -> Bool in
            guard var exchange = exchanges[dataTask.taskIdentifier], !exchange.exceededLimit else { return false }
            if exchange.body.count + data.count > exchange.limit {
                exchange.exceededLimit = true
                exchange.body = Data()
            } else {
                exchange.body.append(data)
            }
            exchanges[dataTask.taskIdentifier] = exchange
            return exchange.exceededLimit
        }
        if tooLarge {
            dataTask.cancel()
        }
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
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        exchange.continuation.resume(returning: Self.result(of: exchange, error: error))
    }

    private static func result(
        of exchange: Exchange,
        error: (any Error)?
    ) -> Result<OAuth2HTTPResponse, RemoteAuthError> {
        if exchange.exceededLimit {
            return .failure(RemoteAuthError(.responseTooLarge(limit: exchange.limit)))
        }
        if exchange.timedOut {
            return .failure(RemoteAuthError(.timedOut))
        }
        if let error {
            let code = (error as? URLError)?.code ?? URLError.Code.unknown
            switch code {
            case .timedOut: return .failure(RemoteAuthError(.timedOut))
            case .cancelled: return .failure(RemoteAuthError(.cancelled))
            default: return .failure(RemoteAuthError(.network(code: code.rawValue)))
            }
        }
        guard let response = exchange.response else {
            return .failure(RemoteAuthError(.invalidResponse("no HTTP response")))
        }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name.lowercased()] = value
            }
        }
        return .success(OAuth2HTTPResponse(statusCode: response.statusCode, headers: headers, body: exchange.body))
    }
}
