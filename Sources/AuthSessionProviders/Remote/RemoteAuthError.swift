import AuthSessionInterface
import Foundation

/// Why a call to a ``RemoteAuthService`` failed, classified by what the caller must do.
///
/// - ``Kind/transient``: the network, a timeout, a 5xx, a 429, a garbled answer. Retry later;
///   never sign the user out for it.
/// - ``Kind/terminal``: the backend says the session is over (`invalid_grant`, a revoked or
///   unknown token, an expired device code). Sign out, once.
/// - ``Kind/misconfiguration``: the app's setup is wrong (`invalid_client`,
///   `unauthorized_client`, `invalid_scope`, a missing endpoint, an ID token for another
///   audience). Report it; retrying cannot help, so never retry it in a loop.
///
/// The server's error code, its description and its `Retry-After` are kept. The description is
/// passed through `SecretRedactor`, shortened, and stripped of control characters; no token
/// appears in any property or in ``description``.
///
/// As a `LocalizedError` it gives a person's message (``problem``): "Wrong username or
/// password", "You are offline", "The server is not responding, try again"; the developer's
/// detail stays in ``description``.
///
/// All operations are thread-safe.
public struct RemoteAuthError: Error, Sendable, Hashable, CustomStringConvertible, CustomReflectable {

    /// What the caller must do about an error.
    ///
    /// All operations are thread-safe.
    public enum Kind: String, Sendable, Hashable, CaseIterable {

        /// Retry later; the session stands.
        case transient

        /// The session is over: sign out.
        case terminal

        /// A bug in the app's setup: report it, do not retry in a loop.
        case misconfiguration
    }

    /// What went wrong.
    ///
    /// All operations are thread-safe.
    public enum Reason: Sendable, Hashable {

        /// The request did not complete: no connection, connection lost or reset, DNS. The
        /// associated value is the `URLError` code.
        case network(code: Int)

        /// No answer within the request's timeout.
        case timedOut

        /// An HTTP status without an OAuth error object (a 5xx page, a 429, a 404).
        case httpStatus(Int)

        /// The server's OAuth error code (RFC 6749 §5.2, RFC 6750 §3.1, RFC 8628 §3.5), such as
        /// `invalid_grant`.
        case server(code: String)

        /// The answer is not what the protocol says (not JSON, a missing or mistyped field, a
        /// wrong content type). The associated value says what, never quoting the body.
        case invalidResponse(String)

        /// The answer was larger than the client accepts; it was not read to the end.
        case responseTooLarge(limit: Int)

        /// The token type is not one the client can use (the associated value, shortened).
        case unsupportedTokenType(String)

        /// The ID token failed a claim check.
        case invalidIDToken(IDTokenValidationError)

        /// The backend does not offer what was asked (no revocation endpoint, say).
        case unsupported(String)

        /// The caller cancelled.
        case cancelled

        /// A resource endpoint (userinfo) refused the access token (`invalid_token`, RFC 6750):
        /// it expired or was revoked. Refresh it; the refresh says whether the session is over.
        case accessTokenRejected
    }

    /// What went wrong.
    public var reason: Reason

    /// The HTTP status of the answer, if there was one.
    public var statusCode: Int?

    /// The server's `error_description`, redacted, shortened and cleaned, if it sent one; a value
    /// set later is cleaned the same way.
    public var serverDescription: String? {
        get { sanitizedServerDescription }
        set { sanitizedServerDescription = newValue.map(Self.sanitized) }
    }

    private var sanitizedServerDescription: String?

    /// How long the server asked the client to wait (`Retry-After`), if it did.
    public var retryAfter: RetryAfter?

    /// The `grant_type` of the token request that failed, when the caller that knows it set it
    /// (the manager does, for its sign-ins and refreshes): `invalid_grant` reads "Wrong username
    /// or password" for a password sign-in and "Your session has ended" for a refresh. Not part
    /// of equality.
    public var grantType: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - reason: What went wrong.
    ///   - statusCode: The HTTP status, if any.
    ///   - serverDescription: The server's description; redacted, shortened and cleaned here.
    ///   - retryAfter: The server's `Retry-After`.
    public init(
        _ reason: Reason,
        statusCode: Int? = nil,
        serverDescription: String? = nil,
        retryAfter: RetryAfter? = nil
    ) {
        self.reason = reason
        self.statusCode = statusCode
        self.sanitizedServerDescription = serverDescription.map(Self.sanitized)
        self.retryAfter = retryAfter
    }

    /// What the caller must do.
    public var kind: Kind {
        switch reason {
        case .network, .timedOut, .invalidResponse, .responseTooLarge, .cancelled, .accessTokenRejected:
            return .transient
        case .httpStatus(let status):
            return Self.kind(ofStatus: status)
        case .server(let code):
            return Self.kind(ofServerCode: code, status: statusCode)
        case .invalidIDToken(.subjectMismatch):
            // Another user's tokens: this session cannot go on, and a retry cannot mend it.
            return .terminal
        case .invalidIDToken(.unknownSigningKey):
            // The issuer may have rotated its keys a moment ago (or the verifier may not fetch
            // them again yet): the key may appear, so this says nothing lasting.
            return .transient
        case .unsupportedTokenType, .invalidIDToken, .unsupported:
            return .misconfiguration
        }
    }

    /// The server's OAuth error code, if it sent one.
    public var serverCode: String? {
        if case .server(let code) = reason { return code }
        return nil
    }

    /// Whether trying the same call again may succeed: ``kind`` is ``Kind/transient``, the caller
    /// did not cancel, the access token was not refused (that one needs a refresh first), and the
    /// server did not answer `authorization_pending` or `slow_down` (RFC 8628 §3.5: the device
    /// flow polls again at the server's interval, which no retry backoff may shorten).
    public var isRetryable: Bool {
        kind == .transient && reason != .cancelled && reason != .accessTokenRejected
            && serverCode != "authorization_pending" && serverCode != "slow_down"
    }

    /// Whether the server may have acted on the request although the client has no usable
    /// answer: a timeout, a connection lost after the request was sent, a garbled or cut answer,
    /// an internal server error (500, `server_error`), a gateway that lost or gave up on the
    /// origin's answer (502, 504, 520, 524: any 5xx but 501, 503, 505, 521, 522), a cancellation.
    ///
    /// `false` when the failure proves the request did not take effect: no connection could be
    /// opened, or the server answered with an error. A call that must not run twice (a refresh
    /// at a server that rotates refresh tokens) may be retried only when this is `false`: after
    /// an uncertain outcome its token may be spent already.
    public var isOutcomeUncertain: Bool {
        switch reason {
        case .network(let code):
            return !Self.codesBeforeSending.contains(code)
        case .httpStatus(let status):
            return Self.isUncertain(status: status)
        case .server(let code):
            return code == "server_error" || statusCode.map(Self.isUncertain(status:)) == true
        case .timedOut, .invalidResponse, .responseTooLarge, .cancelled, .unsupportedTokenType, .invalidIDToken:
            return true
        case .unsupported, .accessTokenRejected:
            return false
        }
    }

    /// Whether the server may have acted before answering `status`: any 5xx (it may have failed
    /// after committing, or a gateway lost or gave up on the origin's answer, as Cloudflare's 520
    /// and 524 say) except those that say the request was not handled: 501, 503, 505, and a
    /// gateway that could not reach the origin (521, 522). A 4xx is an answer.
    private static func isUncertain(status: Int) -> Bool {
        (500...599).contains(status) && ![501, 503, 505, 521, 522].contains(status)
    }

    /// `URLError` codes that mean the request never left the client: bad URL, no network, no
    /// host, no connection, a failed TLS handshake.
    private static let codesBeforeSending: Set<Int> = [
        -1000, -1002, -1003, -1004, -1006, -1009, -1018, -1019, -1020, -1022, -1200, -1201, -1202, -1203, -1204,
        -1205, -1206,
    ]

    /// The description only, so `dump` and debuggers show nothing that was not cleaned.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .struct)
    }

    /// The kind, the reason, the status, the server's code and description, and `Retry-After`;
    /// every text from outside is redacted and cleaned.
    public var description: String {
        var parts = [kind.rawValue, Self.text(of: reason)]
        if let statusCode, !Self.reasonShowsStatus(reason) {
            parts.append("HTTP \(statusCode)")
        }
        if let serverDescription {
            parts.append("\"\(serverDescription)\"")
        }
        if let retryAfter {
            parts.append("retry after \(retryAfter)")
        }
        return "RemoteAuthError(\(parts.joined(separator: ", ")))"
    }

    /// The kind of an HTTP status that came without an OAuth error object.
    static func kind(ofStatus status: Int) -> Kind {
        switch status {
        case 408, 425, 429, 500...599:
            return .transient
        default:
            return .misconfiguration
        }
    }

    /// The kind of a server's OAuth error code.
    static func kind(ofServerCode code: String, status: Int?) -> Kind {
        switch code {
        case "invalid_grant", "invalid_token", "expired_token", "access_denied":
            return .terminal
        case "temporarily_unavailable", "server_error", "authorization_pending", "slow_down":
            return .transient
        case "invalid_client", "unauthorized_client", "invalid_scope", "unsupported_grant_type",
            "invalid_request", "unsupported_token_type", "unsupported_response_type", "insufficient_scope":
            return .misconfiguration
        default:
            // A code this client does not know: the status decides; a 4xx is never retried.
            return status.map(kind(ofStatus:)) ?? .misconfiguration
        }
    }

    private static func text(of reason: Reason) -> String {
        switch reason {
        case .network(let code): return "network error \(code)"
        case .timedOut: return "timed out"
        case .httpStatus(let status): return "HTTP \(status)"
        case .server(let code): return sanitized(code)
        case .invalidResponse(let what): return "invalid response: \(sanitized(what))"
        case .responseTooLarge(let limit): return "response larger than \(limit) bytes"
        case .unsupportedTokenType(let type): return "unsupported token type \"\(sanitized(type))\""
        case .invalidIDToken(let error): return "invalid ID token: \(sanitized("\(error)"))"
        case .unsupported(let what): return "unsupported: \(sanitized(what))"
        case .cancelled: return "cancelled"
        case .accessTokenRejected: return "access token rejected"
        }
    }

    private static func reasonShowsStatus(_ reason: Reason) -> Bool {
        if case .httpStatus = reason { return true }
        return false
    }

    /// A server's text made safe to show: `SecretRedactor`'s display cleaning (the request's
    /// secrets and every registered or credential-shaped word redacted; control, format and
    /// line-separator characters replaced; shortened).
    package static func sanitized(_ text: String) -> String {
        SecretRedactor.sanitized(text)
    }
}

/// How long a server asked a client to wait before trying again: the `Retry-After` header
/// (RFC 9110 §10.2.3), in seconds or as an HTTP date.
///
/// All operations are thread-safe.
public enum RetryAfter: Sendable, Hashable, CustomStringConvertible {

    /// Wait this many seconds.
    case seconds(TimeInterval)

    /// Wait until this date.
    case date(Date)

    /// Parses a `Retry-After` value: a non-negative integer of seconds, or an IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`); also the obsolete RFC 850 and asctime forms.
    ///
    /// - Parameter value: The header's value.
    /// - Returns: The parsed value, or `nil` if it is neither form.
    public init?(headerValue value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Digits only, any length: a huge value is a server asking for "a very long time".
            self = .seconds(Double(trimmed) ?? .greatestFiniteMagnitude)
            return
        }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) {
                self = .date(date)
                return
            }
        }
        return nil
    }

    /// The wait from `now`, never negative.
    ///
    /// - Parameter now: The current date.
    /// - Returns: Seconds to wait.
    public func delay(from now: Date) -> TimeInterval {
        switch self {
        case .seconds(let seconds): return seconds.isNaN ? 0 : max(0, seconds)
        case .date(let date): return max(0, date.timeIntervalSince(now))
        }
    }

    /// `30 s` or the date.
    public var description: String {
        switch self {
        case .seconds(let seconds):
            guard seconds.isFinite, abs(seconds) < 1e15 else { return "\(seconds) s" }
            return "\(Int(seconds)) s"
        case .date(let date): return "\(date)"
        }
    }
}
