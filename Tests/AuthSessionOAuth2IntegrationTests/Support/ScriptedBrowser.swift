import AuthSessionMocks
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A person at a browser, scripted: one cookie store, signs in at the admin login, follows an
/// authorization URL to its redirect (through the consent form when the server shows one), approves
/// (or denies) a device code. See `scripts/oauth-test-server.md`.
///
/// `Sendable`, so a sign-in's `@Sendable` browser closure can drive it: its state is a `URLSession`
/// and that session's cookie store, both thread-safe. Its steps are meant to run one at a time.
final class ScriptedBrowser: Sendable {

    /// One answer from the server: redirects are never followed, the browser reads `Location` itself.
    struct Answer {
        var status: Int
        var location: String?
        var body: String
    }

    /// What one authorization visit through the consent form saw.
    struct Visit: Sendable {
        var consentPageShown: Bool
        var redirect: URL
        var listenerStatus: Int
        var listenerPage: String
    }

    private let server: OAuthTestServer
    private let session: URLSession
    private let cookies: HTTPCookieStorage

    /// - Parameter requestTimeout: how long one request may wait for data before it fails.
    init(server: OAuthTestServer, requestTimeout: TimeInterval = 60) {
        self.server = server
        let configuration = URLSessionConfiguration.ephemeral
        cookies = configuration.httpCookieStorage ?? HTTPCookieStorage.shared
        configuration.httpCookieAcceptPolicy = .always
        configuration.httpShouldSetCookies = true
        configuration.timeoutIntervalForRequest = requestTimeout
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// The CSRF cookie's current value.
    private var csrfToken: String? {
        cookies.cookies(for: server.baseURL)?.first { $0.name == "csrftoken" }?.value
    }

    /// Signs the test user in: at the admin login (django-oauth-toolkit), or through the login
    /// API with a JSON body (Glewlwyd).
    func signIn() async throws {
        if server.kind == .glewlwyd {
            let login = try #require(server.endpoints.userLogin, "no userLogin endpoint")
            let answer = try await sendJSON(
                "POST",
                login,
                ["username": server.user.username, "password": server.user.password]
            )
            try #require(answer.status == 200, "login failed: HTTP \(answer.status)")
            return
        }
        let adminLogin = try #require(server.endpoints.adminLogin, "no adminLogin endpoint")
        _ = try await get(adminLogin)
        let token = try #require(csrfToken, "the login page set no CSRF cookie")
        let answer = try await post(
            adminLogin,
            [
                ("csrfmiddlewaretoken", token), ("username", server.user.username),
                ("password", server.user.password), ("next", "/admin/"),
            ]
        )
        try #require(answer.status == 302 && answer.location == "/admin/", "login failed: HTTP \(answer.status)")
    }

    /// Glewlwyd hands every authorization to its login web app first; the web app, once the
    /// user is signed in and has consented (a grant of the request's scopes to the client), goes
    /// back to the request with `g_continue` added. This does what the web app does.
    private func glewlwydContinue(_ url: URL) async throws -> Answer {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        if let client = items.first(where: { $0.name == "client_id" })?.value {
            let scope = items.first { $0.name == "scope" }?.value ?? "openid"
            try await grant(scope, to: client)
        }
        let separator = url.query == nil ? "?" : "&"
        return try await get(try #require(URL(string: url.absoluteString + separator + "g_continue")))
    }

    /// Consents to `scope` for `client`, as the user does in Glewlwyd's web app.
    func grant(_ scope: String, to client: String) async throws {
        let url = server.baseURL.appendingPathComponent("api/auth/grant/\(client)")
        let answer = try await sendJSON("PUT", url, ["scope": scope])
        try #require(answer.status == 200, "the grant answered HTTP \(answer.status)")
    }

    /// Opens `url` (an authorization request) and returns where the server redirects.
    func redirect(from url: URL) async throws -> URL {
        let answer = server.kind == .glewlwyd ? try await glewlwydContinue(url) : try await get(url)
        try #require(answer.status == 302, "the authorization endpoint answered HTTP \(answer.status)")
        return try #require(answer.location.flatMap { URL(string: $0, relativeTo: server.baseURL)?.absoluteURL })
    }

    /// Opens the authorization URL, approves (or cancels) the consent form, and follows the
    /// server's redirect to the loopback listener.
    func authorize(_ url: URL, approve: Bool = true) async throws -> Visit {
        if server.kind == .glewlwyd {
            // No consent page reaches the client, and no refusal: Glewlwyd's web app asks, and a
            // scope refused is left out of the grant (see scripts/glewlwyd-test-server.md).
            try #require(approve, "Glewlwyd has no refusal that reaches the client")
            let answer = try await glewlwydContinue(url)
            try #require(answer.status == 302, "the authorization endpoint answered HTTP \(answer.status)")
            let location = try #require(answer.location.flatMap { URL(string: $0, relativeTo: url)?.absoluteURL })
            let page = try await get(location)
            return Visit(
                consentPageShown: false,
                redirect: location,
                listenerStatus: page.status,
                listenerPage: page.body
            )
        }
        var answer = try await get(url)
        var consentPageShown = false
        if answer.status == 200 {
            // The consent form posts its hidden fields back to the same URL; "Authorize" is the
            // only named submit button, "Cancel" sends no button.
            consentPageShown = answer.body.contains("authorizationForm")
            var fields = Self.hiddenFields(in: answer.body)
            try #require(fields.contains { $0.0 == "csrfmiddlewaretoken" }, "no consent form")
            if approve {
                fields.append(("allow", "Authorize"))
            }
            answer = try await post(url, fields)
        }
        try #require(answer.status == 302, "the authorization endpoint answered HTTP \(answer.status)")
        let location = try #require(answer.location.flatMap { URL(string: $0, relativeTo: url)?.absoluteURL })
        let page = try await get(location)
        return Visit(
            consentPageShown: consentPageShown,
            redirect: location,
            listenerStatus: page.status,
            listenerPage: page.body
        )
    }

    /// Approves (or denies) `userCode` at the device verification pages.
    func decide(userCode: String, accept: Bool = true) async throws {
        if server.kind == .glewlwyd {
            try #require(accept, "Glewlwyd has no refusal of a device code")
            let device = try #require(server.clients["device"]).clientId
            try await grant("openid profile email read write", to: device)
            let complete = try #require(
                URL(string: server.endpoints.deviceVerification.absoluteString + "?code=\(userCode)&g_continue")
            )
            let answer = try await get(complete)
            try #require(
                answer.status == 302 && answer.location?.contains("prompt=deviceComplete") == true,
                "the device page answered HTTP \(answer.status)"
            )
            return
        }
        let token = try #require(csrfToken)
        let answer = try await post(
            server.endpoints.deviceVerification,
            [("csrfmiddlewaretoken", token), ("user_code", userCode)]
        )
        try #require(answer.status == 302, "the device page answered HTTP \(answer.status)")
        let confirm = try #require(
            answer.location.flatMap { URL(string: $0, relativeTo: server.baseURL)?.absoluteURL }
        )
        let decision = try await post(
            confirm,
            [("csrfmiddlewaretoken", token), ("action", accept ? "accept" : "deny")]
        )
        try #require(decision.status == 302, "the confirmation answered HTTP \(decision.status)")
    }

    /// Sends `object` as JSON with `method`.
    private func sendJSON(_ method: String, _ url: URL, _ object: [String: String]) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: object)
        return try await send(request)
    }

    /// Loads `url` with the browser's cookies, redirects not followed.
    func get(_ url: URL) async throws -> Answer {
        try await send(URLRequest(url: url))
    }

    /// Posts `fields`, in order, as a form.
    private func post(_ url: URL, _ fields: [(String, String)]) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = Data(
            fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
                .joined(separator: "&").utf8
        )
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let response = response as? HTTPURLResponse {
                    continuation.resume(
                        returning: Answer(
                            status: response.statusCode,
                            location: response.value(forHTTPHeaderField: "Location"),
                            body: String(decoding: data ?? Data(), as: UTF8.self)
                        )
                    )
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }

    /// The `name` and `value` of every hidden input, in order, HTML entities decoded.
    static func hiddenFields(in html: String) -> [(String, String)] {
        var fields: [(String, String)] = []
        var rest = html[...]
        while let start = rest.range(of: "<input"), let end = rest[start.upperBound...].range(of: ">") {
            let tag = rest[start.upperBound..<end.lowerBound]
            rest = rest[end.upperBound...]
            guard tag.contains("type=\"hidden\""), let name = attribute("name", in: tag) else { continue }
            fields.append((name, attribute("value", in: tag) ?? ""))
        }
        return fields
    }

    private static func attribute(_ name: String, in tag: Substring) -> String? {
        guard let start = tag.range(of: " \(name)=\"") else { return nil }
        let value = tag[start.upperBound...].prefix { $0 != "\"" }
        return String(value)
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#x27;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// Stops URLSession from following redirects: the browser reads `Location` and follows it itself.
/// (`URLSessionTransport`'s private delegate refuses redirects the same way; it also routes each
/// task's data to its call, so it is not shared with this test browser.)
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
