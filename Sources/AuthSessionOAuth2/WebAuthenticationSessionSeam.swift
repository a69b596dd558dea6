import AuthSession
import Foundation

// The decisions of the `ASWebAuthenticationSession` adapter (`WebAuthenticationSessionBrowser`),
// in portable code tested on every platform: which callback watches a redirect URI, what each
// error means, and one answer per session whatever cancels it. The adapter only performs them.

/// How a browser session recognises the redirect: the portable twin of
/// `ASWebAuthenticationSession.Callback`.
enum WebAuthenticationCallback: Sendable, Hashable {

    /// A redirect to `<scheme>:...`.
    case customScheme(String)

    /// A redirect to `https://<host><path>`: an associated domain of the app (iOS 17.4,
    /// macOS 14.4).
    case https(host: String, path: String)

    /// The callback that watches `redirectURI`.
    ///
    /// - Throws: ``BrowserSignInError/unsupportedRedirectURI(_:)`` for `http` (a loopback
    ///   redirect is for ``LoopbackRedirectListener``), an `https` URI without a host, or a scheme
    ///   that is not one (RFC 3986 §3.1).
    init(redirectURI: URL) throws(BrowserSignInError) {
        guard let scheme = redirectURI.scheme?.lowercased(), let first = scheme.unicodeScalars.first,
            first.isASCII, CharacterSet.letters.contains(first),
            scheme.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0))
            })
        else {
            throw .unsupportedRedirectURI("the redirect URI has no valid scheme")
        }
        switch scheme {
        case "http":
            throw .unsupportedRedirectURI("a browser session cannot watch http; use LoopbackRedirectListener")
        case "https":
            guard let host = redirectURI.host, !host.isEmpty else {
                throw .unsupportedRedirectURI("an https redirect URI needs a host")
            }
            let path = URLComponents(url: redirectURI, resolvingAgainstBaseURL: false)?.path ?? ""
            self = .https(host: host, path: path.isEmpty ? "/" : path)
        default:
            self = .customScheme(scheme)
        }
    }
}

/// What a finished browser session means, from its callback URL or its error's domain and code.
enum WebAuthenticationOutcome {

    /// `ASWebAuthenticationSessionError.Code`'s raw values, as Apple's headers define them.
    static let canceledLogin = 1
    static let presentationContextNotProvided = 2
    static let presentationContextInvalid = 3

    /// Maps the completion handler's arguments.
    ///
    /// - Parameters:
    ///   - url: The callback URL, if any.
    ///   - error: The error's domain and code, if any.
    ///   - sessionErrorDomain: `ASWebAuthenticationSessionErrorDomain`.
    static func map(
        url: URL?,
        error: (domain: String, code: Int)?,
        sessionErrorDomain: String
    ) -> Result<URL, BrowserSignInError> {
        if let error {
            guard error.domain == sessionErrorDomain else {
                return .failure(.presentationFailed("the browser session failed (\(error.domain) \(error.code))"))
            }
            switch error.code {
            case canceledLogin: return .failure(.cancelled)
            case presentationContextNotProvided: return .failure(.presentationFailed("no presentation context"))
            case presentationContextInvalid: return .failure(.presentationFailed("the presentation context is invalid"))
            default: return .failure(.presentationFailed("the browser session failed (code \(error.code))"))
            }
        }
        guard let url else { return .failure(.presentationFailed("the browser session ended without a redirect")) }
        return .success(url)
    }
}

/// A browser session as the adapter drives it: `ASWebAuthenticationSession`, or a test's fake.
@MainActor
protocol WebAuthenticationSessionDriving: AnyObject {
    /// Presents the session; `false` when it could not start.
    func start() -> Bool
    /// Dismisses it.
    func cancel()
}

/// Runs one browser session to its single answer.
@MainActor
enum WebAuthenticationRun {

    /// Makes the session with a completion handler, starts it, and waits for its one answer:
    /// the completion handler's, `start()` failing, or the task's cancellation (which cancels the
    /// session and answers ``BrowserSignInError/cancelled`` at once).
    ///
    /// - Parameters:
    ///   - sessionErrorDomain: The domain of the session's own errors.
    ///   - makeSession: Builds the session around the completion handler it is given.
    static func run(
        sessionErrorDomain: String,
        makeSession: (_ completion: @escaping (URL?, (any Error)?) -> Void) throws(BrowserSignInError) ->
            any WebAuthenticationSessionDriving
    ) async throws(BrowserSignInError) -> URL {
        if Task.isCancelled { throw .cancelled }
        let answer = SingleAnswer()
        let holder = SessionHolder()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<URL, BrowserSignInError>, Never>) in
                answer.attach(continuation)
                do throws(BrowserSignInError) {
                    let session = try makeSession { url, error in
                        let nsError = error.map { $0 as NSError }
                        answer.give(
                            WebAuthenticationOutcome.map(
                                url: url,
                                error: nsError.map { ($0.domain, $0.code) },
                                sessionErrorDomain: sessionErrorDomain
                            )
                        )
                        Task { @MainActor in holder.session = nil }
                    }
                    holder.session = session
                    if answer.isGiven {
                        session.cancel()
                    } else if !session.start() {
                        answer.give(.failure(.presentationFailed("the browser session did not start")))
                    }
                } catch {
                    answer.give(.failure(error))
                }
            }
        } onCancel: {
            answer.give(.failure(.cancelled))
            Task { @MainActor in holder.session?.cancel() }
        }
        return try result.get()
    }

    /// Keeps the session alive until it answers, for `cancel()`.
    @MainActor
    final class SessionHolder {
        var session: (any WebAuthenticationSessionDriving)?
    }

    /// One answer for one continuation, whoever gives it first; an answer given before the
    /// continuation is attached waits for it.
    final class SingleAnswer: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result<URL, BrowserSignInError>, Never>?
            var answer: Result<URL, BrowserSignInError>?
            var delivered = false
        }
        private let state = ConcurrencySafeContainer(State())

        var isGiven: Bool { state.withLock { $0.answer != nil } }

        func attach(_ continuation: CheckedContinuation<Result<URL, BrowserSignInError>, Never>) {
            let ready = state.withLock { state -> Result<URL, BrowserSignInError>? in
                guard let answer = state.answer else {
                    state.continuation = continuation
                    return nil
                }
                state.delivered = true
                return answer
            }
            if let ready {
                continuation.resume(returning: ready)
            }
        }

        func give(_ answer: Result<URL, BrowserSignInError>) {
            let waiting = state.withLock { state -> CheckedContinuation<Result<URL, BrowserSignInError>, Never>? in
                guard state.answer == nil else { return nil }
                state.answer = answer
                guard let continuation = state.continuation, !state.delivered else { return nil }
                state.delivered = true
                state.continuation = nil
                return continuation
            }
            waiting?.resume(returning: answer)
        }
    }
}
