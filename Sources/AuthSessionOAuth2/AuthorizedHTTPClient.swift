import AuthSession
import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends an app's API requests with the session's access token, and refreshes once when the API
/// rejects it.
///
/// ```swift
/// let api = AuthorizedHTTPClient(provider: manager)      // URLSession.shared by default
/// let (data, response) = try await api.data(for: URLRequest(url: profileURL))
/// ```
///
/// Each request is sent with `Authorization: Bearer <token>` (the token of
/// `ManagedSessionProvider.validAccessToken(minimumValidity:)`, refreshed first if it is about
/// to expire); an `Authorization` header the request carries is replaced. When the answer is a
/// 401 that rejects the token, the client:
/// 1. calls `ManagedSessionProvider.refresh(ifAccessTokenIs:minimumValidity:)`: one refresh for
///    any number of requests rejected with the same token, joined if one is in flight, and none
///    at all if the token changed since this request was signed (it then retries with the new one).
///    If that refresh failed transiently (offline, a 5xx), later rejections of the same token
///    fail with that failure, without a refresh, until the manager's retry backoff has run out;
/// 2. sends the request again, once, with the new token, and returns that answer, whatever it is:
///    a second 401 is returned to the caller, never a second refresh.
///
/// A session without a refresh token cannot be refreshed: its 401 is returned as it is, and the
/// session stands (the manager ends it when its access token expires).
///
/// The retry is only ever signed as the person the request was first signed for
/// (`ManagedSession.isSameIdentity(as:)`): if that person signed out and someone else signed in
/// while the request was out, the call fails with ``AuthorizedRequestError/session(_:)`` carrying
/// `ManagedSessionError.superseded` (drop the answer: it was the previous person's request), and
/// the other person's token is never sent.
///
/// Which 401s reject the token: RFC 6750 §3.1 has a server answer an invalid, expired or revoked
/// token with 401 and `WWW-Authenticate: Bearer error="invalid_token"`; many APIs send a bare 401.
/// Both count. A 401 whose `Bearer` challenge names another error (`invalid_request`,
/// `insufficient_scope`) does not: a new token would not change the answer, so it is returned.
///
/// Replaying: a request whose body is `httpBody` data (or that has none) is sent again whatever
/// its method, `POST` included: a server that answers 401 refused the request before acting on it
/// (RFC 6750 §3.1). A request whose body is a stream (`httpBodyStream`) cannot be sent twice: its
/// 401 is returned as it is, with no refresh; send it again after
/// `ManagedSessionProvider.refresh(ifAccessTokenIs:minimumValidity:)` if you need to.
///
/// The token goes only over `https`, or `http` to a loopback host (`127.0.0.1`, `::1`,
/// `localhost`); any other request fails with ``AuthorizedRequestError/insecureRequest`` before a
/// token is read. A signed request follows a redirect only within its own origin (the same
/// scheme, host and port as the request the caller passed), with the token; a redirect anywhere
/// else (another host or port, or `https` to `http`) is not followed: its 3xx comes back as the
/// answer, and the token goes nowhere else. This holds whatever `URLSession` the client is given
/// (see ``init(provider:session:minimumValidity:)``); a ``Loader`` of your own must keep the same
/// rule.
///
/// All operations are thread-safe.
public final class AuthorizedHTTPClient: Sendable {

    /// Sends one request and returns the answer: `URLSession`'s role, replaceable in tests.
    ///
    /// It must send `request` as it is and throw a `URLError` for a network failure (code
    /// `URLError.Code.cancelled` when the calling task is cancelled).
    public typealias Loader = @Sendable (_ request: URLRequest) async throws(URLError) -> (Data, URLResponse)

    /// The manager whose session signs the requests.
    public let provider: ManagedSessionProvider

    /// The seconds a token must still be valid when a request is signed; 30 by default.
    public let minimumValidity: TimeInterval

    private let load: Loader

    /// Creates a client that sends requests with the configuration of `session`.
    ///
    /// The requests go through a `URLSession` the client makes with `session.configuration`
    /// (its headers, timeouts, cookie storage, cache, proxies and protocol classes) and a
    /// delegate of its own, which never lets a signed request follow a redirect out of its origin
    /// (see ``AuthorizedHTTPClient``): URLSession itself would copy the `Authorization` header
    /// onto a redirect to any host, and a task of the app's session cannot have a delegate of its
    /// own on iOS 14. So `session`'s delegate is not called for these requests; if it must see
    /// them (certificate pinning, client certificates, metrics), send through it with
    /// ``init(provider:minimumValidity:loader:)`` and refuse redirects out of the origin there.
    ///
    /// Requests run as data tasks driven by the delegate (never as async `data(for:)`, whose
    /// cancellation can crash or hang on Linux); cancelling the calling task cancels the data task.
    ///
    /// - Parameters:
    ///   - provider: The manager whose session signs the requests.
    ///   - session: The app's `URLSession`, whose configuration is used; `URLSession.shared` by
    ///     default.
    ///   - minimumValidity: The seconds a token must still be valid when a request is signed.
    public convenience init(
        provider: ManagedSessionProvider,
        session: URLSession = .shared,
        minimumValidity: TimeInterval = 30
    ) {
        let loader = OriginBoundLoader(configuration: session.configuration)
        self.init(provider: provider, minimumValidity: minimumValidity) { (request) throws(URLError) in
            try await loader.load(request)
        }
    }

    /// Creates a client that sends requests with `loader`: a test's scripted server, or a
    /// transport of the app's own.
    ///
    /// - Parameters:
    ///   - provider: The manager whose session signs the requests.
    ///   - minimumValidity: The seconds a token must still be valid when a request is signed.
    ///   - loader: Sends a signed request and returns the answer.
    public init(
        provider: ManagedSessionProvider,
        minimumValidity: TimeInterval = 30,
        loader: @escaping Loader
    ) {
        self.provider = provider
        self.minimumValidity = minimumValidity
        self.load = loader
    }

    /// Sends `request` with the session's access token; on a 401 that rejects the token,
    /// refreshes once (or takes the token a refresh already brought) and sends it once more.
    ///
    /// - Parameter request: The request; its `Authorization` header is replaced.
    /// - Returns: The body and the response: the retry's if there was one, whatever its status.
    /// - Throws: ``AuthorizedRequestError``: ``AuthorizedRequestError/session(_:)`` when no token
    ///   could be had (nobody signed in, the refresh failed or ended the session, or, with
    ///   `ManagedSessionError.superseded`, the person the request was signed for signed out and
    ///   another signed in before the retry),
    ///   ``AuthorizedRequestError/network(_:)``, ``AuthorizedRequestError/insecureRequest``,
    ///   ``AuthorizedRequestError/unsupportedTokenType(_:)`` or
    ///   ``AuthorizedRequestError/cancelled``.
    public func data(for request: URLRequest) async throws(AuthorizedRequestError) -> (Data, HTTPURLResponse) {
        guard Self.isSafeDestination(request.url) else { throw .insecureRequest }
        // The token and the person it belongs to, read in one step of the manager.
        let signer: ManagedSession
        do {
            signer = try await provider.validSession(minimumValidity: minimumValidity)
        } catch {
            throw Self.failure(error)
        }
        let first = try await send(request, token: signer.accessToken, tokenType: signer.tokenType)
        guard Self.rejectsToken(first.1), request.httpBodyStream == nil else { return first }
        let session: ManagedSession
        do {
            session = try await provider.refresh(ifAccessTokenIs: signer.accessToken, minimumValidity: minimumValidity)
        } catch .refreshUnavailable {
            // Nothing to refresh with, and the manager keeps the session (one API's 401 is not
            // the authority on it): the API's answer is the answer.
            return first
        } catch {
            throw Self.failure(error)
        }
        // Someone signed out and another person signed in since the request was signed: it was
        // that person's request, never to be sent with another's token.
        guard session.isSameIdentity(as: signer) else { throw .session(.superseded) }
        if Task.isCancelled { throw .cancelled }
        return try await send(request, token: session.accessToken, tokenType: session.tokenType)
    }

    /// Sends `request` signed with `token`.
    private func send(
        _ request: URLRequest,
        token: String,
        tokenType: String
    ) async throws(AuthorizedRequestError) -> (Data, HTTPURLResponse) {
        guard let scheme = Self.authorizationScheme(for: tokenType) else {
            throw .unsupportedTokenType(RemoteAuthError.sanitized(String(tokenType.prefix(32))))
        }
        var signed = request
        signed.setValue("\(scheme) \(token)", forHTTPHeaderField: "Authorization")
        let answer: (Data, URLResponse)
        do {
            answer = try await load(signed)
        } catch {
            throw error.code == .cancelled ? .cancelled : .network(error)
        }
        guard let response = answer.1 as? HTTPURLResponse else { throw .network(URLError(.badServerResponse)) }
        return (answer.0, response)
    }

    private static func failure(_ error: ManagedSessionError) -> AuthorizedRequestError {
        error == .cancelled ? .cancelled : .session(error)
    }

    // MARK: - Rules

    /// The scheme of the `Authorization` header for `tokenType`: `Bearer` (in that spelling,
    /// whatever the server's), another scheme as it is; `nil` for `DPoP`, whose tokens need a
    /// proof this client does not make, and for a value that is no HTTP token.
    static func authorizationScheme(for tokenType: String) -> String? {
        if tokenType.caseInsensitiveCompare("bearer") == .orderedSame { return "Bearer" }
        if tokenType.caseInsensitiveCompare("dpop") == .orderedSame { return nil }
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard !tokenType.isEmpty, tokenType.count <= 64, tokenType.allSatisfy(tokenCharacters.contains) else {
            return nil
        }
        return tokenType
    }

    /// Whether a token may be sent to `url`: `https`, or `http` to a loopback host.
    static func isSafeDestination(_ url: URL?) -> Bool {
        guard let url, let scheme = url.scheme?.lowercased() else { return false }
        if scheme == "https" { return true }
        guard scheme == "http", let host = url.host?.lowercased() else { return false }
        return ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host)
    }

    /// Whether `response` rejects the token it was sent with: a 401, unless its `Bearer`
    /// challenge names an error other than `invalid_token`.
    static func rejectsToken(_ response: HTTPURLResponse) -> Bool {
        guard response.statusCode == 401 else { return false }
        guard let header = response.value(forHTTPHeaderField: "WWW-Authenticate") else { return true }
        guard let error = bearerError(inChallenges: header) else { return true }
        return error == "invalid_token"
    }

    /// Whether a 401 from the userinfo endpoint with `header` (its `WWW-Authenticate`, if any)
    /// refuses the access token: with no challenge (Glewlwyd's bare 401) or with a `Bearer`
    /// challenge naming no error or `invalid_token` (RFC 6750 §3.1). Stricter than
    /// ``rejectsToken(_:)``, which also takes another scheme's challenge for a refusal (a wasted
    /// refresh at worst): a credential check reads this answer as a revocation, so a proxy's
    /// `Basic` or `Negotiate` challenge must not count.
    static func userInfoRefusesToken(challengeHeader header: String?) -> Bool {
        guard let header, !header.allSatisfy(\.isWhitespace) else { return true }
        let bearer = bearerChallenge(in: header)
        return bearer.isPresent && (bearer.error == nil || bearer.error == "invalid_token")
    }

    /// The `error` parameter of the `Bearer` challenge in a `WWW-Authenticate` value, if any.
    static func bearerError(inChallenges header: String) -> String? {
        bearerChallenge(in: header).error
    }

    /// Whether a `WWW-Authenticate` value holds a `Bearer` challenge, and its `error` parameter.
    ///
    /// The value is a comma-separated list of challenges (`scheme`, then one space or more and a
    /// first parameter or a `token68`) and further parameters of the challenge before them
    /// (`name=value` or `name="quoted value"`, with optional spaces or tabs around `=`), RFC 9110
    /// §11.6.1 and §11.2. Scheme and parameter names are case-insensitive.
    private static func bearerChallenge(in header: String) -> (isPresent: Bool, error: String?) {
        var scheme: Substring = ""
        var isPresent = false
        for item in splitOutsideQuotes(header) {
            let item = item.drop(while: isOptionalWhiteSpace)
            let leading = item.prefix(while: isTokenCharacter)
            guard !leading.isEmpty else { continue }
            var parameter = item[leading.endIndex...].drop(while: isOptionalWhiteSpace)
            if parameter.first == "=" {
                // `name BWS "=" BWS value`: a parameter of the challenge before it.
                parameter = item
            } else {
                // A new challenge, with no parameter or followed by its first one.
                scheme = leading
            }
            guard scheme.caseInsensitiveCompare("bearer") == .orderedSame else { continue }
            isPresent = true
            guard let (name, value) = self.parameter(parameter), name.caseInsensitiveCompare("error") == .orderedSame
            else { continue }
            return (true, value)
        }
        return (isPresent, nil)
    }

    /// The name and the value (unquoted) of `text`, an `auth-param`; `nil` for anything else (a
    /// `token68`, nothing).
    private static func parameter(_ text: Substring) -> (name: Substring, value: String)? {
        let name = text.prefix(while: isTokenCharacter)
        var rest = text[name.endIndex...].drop(while: isOptionalWhiteSpace)
        guard !name.isEmpty, rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop(while: isOptionalWhiteSpace)
        guard rest.first == "\"" else {
            // A token; a `token68` ends in `=` signs and is no parameter.
            let value = rest.prefix(while: isTokenCharacter)
            return value.isEmpty ? nil : (name, String(value))
        }
        var value = ""
        var isEscaped = false
        for character in rest.dropFirst() {
            if isEscaped {
                value.append(character)
                isEscaped = false
            } else if character == "\\" {
                isEscaped = true
            } else if character == "\"" {
                break
            } else {
                value.append(character)
            }
        }
        return (name, value)
    }

    private static func isOptionalWhiteSpace(_ character: Character) -> Bool {
        character == " " || character == "\t"
    }

    private static let tokenCharacters = Set(
        "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    )

    private static func isTokenCharacter(_ character: Character) -> Bool {
        tokenCharacters.contains(character)
    }

    /// `text` split at the commas outside quoted strings.
    private static func splitOutsideQuotes(_ text: String) -> [Substring] {
        var items: [Substring] = []
        var start = text.startIndex
        var isQuoted = false
        var isEscaped = false
        for index in text.indices {
            let character = text[index]
            if isEscaped {
                isEscaped = false
            } else if isQuoted && character == "\\" {
                isEscaped = true
            } else if character == "\"" {
                isQuoted.toggle()
            } else if character == ",", !isQuoted {
                items.append(text[start..<index])
                start = text.index(after: index)
            }
        }
        items.append(text[start...])
        return items
    }
}

/// Why ``AuthorizedHTTPClient/data(for:)`` returned no answer. An HTTP status, a 401 included, is
/// an answer, not an error.
///
/// No case carries a token, and neither does ``description``.
///
/// All operations are thread-safe.
public enum AuthorizedRequestError: Error, Sendable, CustomStringConvertible {

    /// No token to send: nobody is signed in, the refresh after a 401 failed (the session stands)
    /// or ended the session (`ManagedSessionError.endsSession`: show sign-in), or
    /// (`ManagedSessionError.superseded`) the person the request was signed for signed out and
    /// another person signed in before it could be sent again.
    case session(ManagedSessionError)

    /// The request was not sent, or its answer not received: the `URLSession`'s error (or a
    /// response that is not HTTP, as `URLError.Code.badServerResponse`).
    case network(URLError)

    /// The request would send the token over plain `http` to a host other than loopback, or has
    /// no URL: nothing was sent and no token was read.
    case insecureRequest

    /// The session's token type (sanitized) is one this client cannot sign with: `DPoP`, whose
    /// tokens need a proof, or a value that is no HTTP scheme. Nothing was sent.
    case unsupportedTokenType(String)

    /// The calling task was cancelled. A refresh it joined goes on for the other callers.
    case cancelled

    /// The case and its cause, without any token.
    public var description: String {
        switch self {
        case .session(let error): "session(\(error))"
        case .network(let error): "network(URLError \(error.code.rawValue))"
        case .insecureRequest: "insecureRequest"
        case .unsupportedTokenType(let type): "unsupportedTokenType(\(type))"
        case .cancelled: "cancelled"
        }
    }
}

extension AuthorizedRequestError: SessionEndingError {

    /// Whether the session is over: the app should show sign-in. Only ``session(_:)`` can say
    /// so, when its error does (`ManagedSessionError.endsSession`).
    public var endsSession: Bool {
        if case .session(let error) = self { return error.endsSession }
        return false
    }
}

extension AuthorizedRequestError: LocalizedError {

    /// What went wrong, as the person using the app would put it.
    ///
    /// ``session(_:)`` has its error's problem. ``network(_:)``: no connection (not connected,
    /// the connection lost, data not allowed, roaming off) is `AuthProblem.offline`; an answer
    /// that cannot be read, `AuthProblem.serverError`; a URL the app got wrong,
    /// `AuthProblem.appMisconfigured`; any other failure (a timeout, a host that cannot be found
    /// or reached, TLS), `AuthProblem.serverNotResponding`. ``insecureRequest`` and
    /// ``unsupportedTokenType(_:)`` are the app's setup: `AuthProblem.appMisconfigured`.
    public var problem: AuthProblem {
        switch self {
        case .session(let error): error.problem
        case .network(let error): Self.problem(of: error.code)
        case .insecureRequest, .unsupportedTokenType: .appMisconfigured
        case .cancelled: .cancelled
        }
    }

    /// The person's message: ``problem``'s, through `AuthProblem.localizer`.
    public var errorDescription: String? { problem.message }

    /// What the person can do: ``problem``'s suggestion, through `AuthProblem.localizer`.
    public var recoverySuggestion: String? { problem.recoverySuggestion }

    private static func problem(of code: URLError.Code) -> AuthProblem {
        switch code {
        case .notConnectedToInternet, .networkConnectionLost, .dataNotAllowed, .internationalRoamingOff,
            .callIsActive:
            .offline
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
            .zeroByteResource, .dataLengthExceedsMaximum:
            .serverError
        case .badURL, .unsupportedURL, .appTransportSecurityRequiresSecureConnection:
            .appMisconfigured
        case .cancelled:
            .cancelled
        default:
            .serverNotResponding
        }
    }
}
