import AuthSessionMocks
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A person at a browser, scripted: signs in at the admin login, follows an authorization URL to
/// its redirect, approves (or denies) a device code. See `scripts/oauth-test-server.md`.
///
/// Not thread-safe: use from one task at a time.
final class ScriptedBrowser {

    private let server: OAuthTestServer
    private let session: URLSession
    private let cookies: HTTPCookieStorage

    init(server: OAuthTestServer) {
        self.server = server
        let configuration = URLSessionConfiguration.ephemeral
        cookies = configuration.httpCookieStorage ?? HTTPCookieStorage.shared
        configuration.httpCookieAcceptPolicy = .always
        configuration.httpShouldSetCookies = true
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// The CSRF cookie's current value.
    private var csrfToken: String? {
        cookies.cookies(for: server.baseURL)?.first { $0.name == "csrftoken" }?.value
    }

    /// Signs the test user in at the admin login.
    func signIn() async throws {
        _ = try await load(server.endpoints.adminLogin)
        let token = try #require(csrfToken, "the login page set no CSRF cookie")
        let (status, location) = try await post(
            server.endpoints.adminLogin,
            [
                "csrfmiddlewaretoken": token, "username": server.user.username, "password": server.user.password,
                "next": "/admin/",
            ]
        )
        try #require(status == 302 && location == "/admin/", "login failed: HTTP \(status)")
    }

    /// Opens `url` (an authorization request) and returns where the server redirects.
    func redirect(from url: URL) async throws -> URL {
        let (status, location) = try await load(url)
        try #require(status == 302, "the authorization endpoint answered HTTP \(status)")
        return try #require(location.flatMap { URL(string: $0, relativeTo: server.baseURL)?.absoluteURL })
    }

    /// Approves (or denies) `userCode` at the device verification pages.
    func decide(userCode: String, accept: Bool = true) async throws {
        let token = try #require(csrfToken)
        let (status, location) = try await post(
            server.endpoints.deviceVerification,
            ["csrfmiddlewaretoken": token, "user_code": userCode]
        )
        try #require(status == 302, "the device page answered HTTP \(status)")
        let confirm = try #require(location.flatMap { URL(string: $0, relativeTo: server.baseURL)?.absoluteURL })
        let (decision, _) = try await post(
            confirm,
            ["csrfmiddlewaretoken": token, "action": accept ? "accept" : "deny"]
        )
        try #require(decision == 302, "the confirmation answered HTTP \(decision)")
    }

    private func load(_ url: URL) async throws -> (Int, String?) {
        try await send(URLRequest(url: url))
    }

    private func post(_ url: URL, _ fields: [String: String]) async throws -> (Int, String?) {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = Data(
            fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
                .joined(separator: "&").utf8
        )
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws -> (Int, String?) {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { _, response, error in
                if let response = response as? HTTPURLResponse {
                    continuation.resume(
                        returning: (response.statusCode, response.value(forHTTPHeaderField: "Location"))
                    )
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }
}

/// Stops URLSession from following redirects: the test reads `Location` itself.
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
