import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Building requests and reading answers the way every OAuth 2.0 endpoint needs.
enum HTTPExchange {

    /// Percent-encodes a form value (`application/x-www-form-urlencoded`): everything but the
    /// unreserved characters is escaped.
    static func formEncode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// RFC 3986's unreserved characters: ASCII letters and digits, `-`, `.`, `_`, `~`.
    private static let unreserved: CharacterSet = {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127))
        )
        allowed.insert(charactersIn: "-._~")
        return allowed
    }()

    /// A form body from ordered pairs.
    static func formBody(_ pairs: [(String, String)]) -> Data {
        Data(pairs.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&").utf8)
    }

    /// Refuses plain `http` to anything but loopback unless allowed.
    static func checkScheme(of url: URL, allowsInsecureHTTP: Bool) throws(RemoteAuthError) {
        switch url.scheme?.lowercased() {
        case "https":
            return
        case "http":
            let host = url.host?.lowercased() ?? ""
            if allowsInsecureHTTP || host == "127.0.0.1" || host == "::1" || host == "[::1]" || host == "localhost" {
                return
            }
            throw RemoteAuthError(.unsupported("plain http to a host other than loopback"))
        default:
            throw RemoteAuthError(.unsupported("an endpoint that is not http or https"))
        }
    }

    /// A form POST to `url`, authenticated as `client` (Basic header, or fields in the body).
    static func formPost(
        to url: URL,
        fields: [(String, String)],
        client: OAuth2Client,
        timeout: TimeInterval
    ) -> URLRequest {
        var fields = fields
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        switch client.authentication {
        case .none:
            fields.append(("client_id", client.id))
        case .clientSecretPost(let secret):
            fields.append(("client_id", client.id))
            fields.append(("client_secret", secret))
        case .clientSecretBasic(let secret):
            // RFC 6749 §2.3.1: each part form-encoded, then joined and base64-encoded.
            let credentials = "\(formEncode(client.id)):\(formEncode(secret))"
            request.setValue(
                "Basic \(Data(credentials.utf8).base64EncodedString())",
                forHTTPHeaderField: "Authorization"
            )
        }
        request.httpBody = formBody(fields)
        return request
    }

    /// The server's wait request, if it sent a parsable `Retry-After`.
    static func retryAfter(of response: OAuth2HTTPResponse) -> RetryAfter? {
        response.header("Retry-After").flatMap(RetryAfter.init(headerValue:))
    }

    /// Whether the answer says it is JSON (`application/json` or a `+json` type).
    static func isJSON(_ response: OAuth2HTTPResponse) -> Bool {
        guard let type = response.header("Content-Type") else { return false }
        let mediaType = type.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        return mediaType == "application/json" || mediaType?.hasSuffix("+json") == true
    }

    /// The error an answer that is not a success stands for: the server's OAuth error object
    /// when it sent one, else the status.
    ///
    /// A 5xx is transient whatever its body says: a server that failed (or a proxy in front of
    /// it) may carry any error object or challenge, and a terminal code in it (`invalid_grant`,
    /// `invalid_token`) must not end a session. Such an answer keeps its code only when the code
    /// is transient too (`server_error`, `temporarily_unavailable`, a code this client does not
    /// know); otherwise it is the bare status, with the server's description. Discovery, the
    /// token endpoint (sign-in, refresh, device polls), revocation, introspection and userinfo
    /// all read their errors here.
    static func error(from response: OAuth2HTTPResponse) -> RemoteAuthError {
        var error = errorAsSent(from: response)
        if (500...599).contains(response.statusCode), error.kind != .transient {
            error.reason = .httpStatus(response.statusCode)
        }
        return error
    }

    /// The error an answer names: its error object, its `Bearer` challenge, or its status.
    private static func errorAsSent(from response: OAuth2HTTPResponse) -> RemoteAuthError {
        let status = response.statusCode
        let retryAfter = retryAfter(of: response)
        // The error object is read whatever the content type says: some servers label it wrongly.
        if let object = try? JSONValue.decode(response.body).objectValue, let code = object["error"]?.stringValue {
            return RemoteAuthError(
                .server(code: sanitizedCode(code)),
                statusCode: status,
                serverDescription: object["error_description"]?.stringValue,
                retryAfter: retryAfter
            )
        }
        // RFC 6750 §3: a resource server puts its error in the challenge.
        if let challenge = response.header("WWW-Authenticate"), let code = bearerError(in: challenge) {
            return RemoteAuthError(.server(code: code), statusCode: status, retryAfter: retryAfter)
        }
        return RemoteAuthError(.httpStatus(status), statusCode: status, retryAfter: retryAfter)
    }

    /// The JSON object of a successful answer; the error it stands for otherwise.
    ///
    /// A success that carries an `error` member (some servers answer 200 with an error object)
    /// is that error.
    static func jsonObject(from response: OAuth2HTTPResponse) throws(RemoteAuthError) -> [String: JSONValue] {
        guard (200..<300).contains(response.statusCode) else { throw error(from: response) }
        guard isJSON(response) else {
            throw RemoteAuthError(.invalidResponse("content type is not JSON"), statusCode: response.statusCode)
        }
        guard let value = try? JSONValue.decode(response.body), let object = value.objectValue else {
            throw RemoteAuthError(.invalidResponse("body is not a JSON object"), statusCode: response.statusCode)
        }
        if let code = object["error"]?.stringValue {
            throw RemoteAuthError(
                .server(code: sanitizedCode(code)),
                statusCode: response.statusCode,
                serverDescription: object["error_description"]?.stringValue
            )
        }
        return object
    }

    /// An error code as RFC 6749 allows it (printable ASCII without quote or backslash, at most
    /// 64 characters) that carries no secret; anything else is replaced, so a hostile code can
    /// smuggle neither a token (a refresh token fits in 64 characters) nor control characters
    /// into an error.
    static func sanitizedCode(_ code: String) -> String {
        let printable = code.unicodeScalars.allSatisfy {
            $0.value >= 0x20 && $0.value <= 0x7E && $0 != "\"" && $0 != "\\"
        }
        guard printable, !code.isEmpty, code.count <= 64 else { return invalidCode }
        // A standard code is kept as it is: it decides what the caller does, and a short secret
        // (a password "grant") must not rewrite `invalid_grant`.
        if standardCodes.contains(code) { return code }
        // Any other code is kept only if it carries none of the request's secrets and no
        // registered or credential-shaped text.
        return RemoteAuthError.sanitized(code) == code ? code : invalidCode
    }

    private static let invalidCode = "invalid_error_code"

    /// The error codes of RFC 6749, 6750, 7009, 8628 and OpenID Connect Core.
    static let standardCodes: Set<String> = [
        "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
        "invalid_scope", "access_denied", "unsupported_response_type", "server_error", "temporarily_unavailable",
        "invalid_token", "insufficient_scope", "unsupported_token_type", "authorization_pending", "slow_down",
        "expired_token", "interaction_required", "login_required", "account_selection_required",
        "consent_required", "invalid_request_uri", "invalid_request_object", "request_not_supported",
        "request_uri_not_supported", "registration_not_supported",
    ]

    /// The `error` parameter of a `Bearer` challenge (RFC 6750 §3): the parameter name in any
    /// case, the value quoted or not; text inside another parameter's quoted value is skipped.
    static func bearerError(in challenge: String) -> String? {
        var scalars = Substring(challenge).unicodeScalars[...]
        func skip(while predicate: (Unicode.Scalar) -> Bool) -> Substring.UnicodeScalarView {
            let taken = scalars.prefix(while: predicate)
            scalars = scalars.dropFirst(taken.count)
            return taken
        }
        let separators: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "," || $0 == "\t" }
        while !scalars.isEmpty {
            _ = skip(while: separators)
            let name = String(String.UnicodeScalarView(skip { !separators($0) && $0 != "=" }))
            guard scalars.first == "=" else { continue }
            scalars = scalars.dropFirst()
            var value = ""
            if scalars.first == "\"" {
                scalars = scalars.dropFirst()
                value = String(String.UnicodeScalarView(skip { $0 != "\"" }))
                scalars = scalars.dropFirst()
            } else {
                value = String(String.UnicodeScalarView(skip { !separators($0) }))
            }
            if name.lowercased() == "error" {
                return sanitizedCode(value)
            }
        }
        return nil
    }
}
