import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension OAuth2Service {

    /// Asks the authorization endpoint about `request` before a browser opens it, so that a
    /// request the server refuses (an unknown client identifier, an unregistered redirect URI, a
    /// scope the client may not ask for) fails at once with the server's reason, not after the
    /// person gave up waiting in the browser.
    ///
    /// It sends the authorization URL as a `GET`, with no cookies and without following
    /// redirects, and reads the answer:
    /// - a redirect to the request's redirect URI that carries the server's `error` (the server
    ///   checked the request and refused it): throws ``BrowserSignInError/redirect(_:)`` with it;
    /// - `400`, `401`, `404` or `410` (RFC 6749 §4.1.2.1: a server that cannot trust the client or
    ///   the redirect URI must not redirect, and shows an error page): throws
    ///   ``BrowserSignInError/request(_:)`` with the server's error object if it sent one, else the
    ///   status;
    /// - anything else (the sign-in page, a redirect to it, a server error, no answer, a page
    ///   over the size limit, `403` from a shield that tells browsers from programs): returns,
    ///   and the browser decides.
    ///
    /// A check, not a guarantee: a server that sends every request to its sign-in page before it
    /// looks at the client (django-oauth-toolkit does) shows its refusal only in the browser.
    ///
    /// - Parameter request: The request, from ``authorizationRequest(redirectURI:scope:additionalParameters:)``.
    /// - Throws: ``BrowserSignInError`` when the server refused the request;
    ///   ``BrowserSignInError/cancelled`` when the calling task was cancelled.
    public func checkAuthorizationRequest(_ request: AuthorizationRequest) async throws(BrowserSignInError) {
        var check = URLRequest(
            url: request.url,
            cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: min(configuration.requestTimeout, 10)
        )
        check.httpMethod = "GET"
        check.setValue("text/html, application/json;q=0.9", forHTTPHeaderField: "Accept")
        let response: OAuth2HTTPResponse
        do throws(RemoteAuthError) {
            response = try await send(check)
        } catch {
            if Task.isCancelled || error.reason == .cancelled { throw .cancelled }
            // No answer here says nothing of the browser's (another network, a proxy).
            return
        }
        if Task.isCancelled { throw .cancelled }
        if (300..<400).contains(response.statusCode), let location = response.header("Location"),
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            request.isRedirectURI(target)
        {
            let hasError =
                URLComponents(url: target, resolvingAgainstBaseURL: false)?.queryItems?
                .contains { $0.name == "error" } ?? false
            guard hasError else { return }
            do throws(AuthorizationRedirectError) {
                _ = try request.grant(fromRedirect: target)
            } catch {
                throw .redirect(error)
            }
            return
        }
        if Self.refusalStatuses.contains(response.statusCode) {
            throw .request(HTTPExchange.error(from: response))
        }
    }

    /// The statuses of an authorization endpoint that refused the request itself.
    static let refusalStatuses: Set<Int> = [400, 401, 404, 410]
}

extension AuthorizationRequest {

    /// Whether `url` is this request's redirect URI (scheme, host, port and path), whatever its
    /// query.
    func isRedirectURI(_ url: URL) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let expected = URLComponents(url: redirectURI, resolvingAgainstBaseURL: false)
        else { return false }
        return components.scheme?.lowercased() == expected.scheme?.lowercased()
            && components.host?.lowercased() == expected.host?.lowercased()
            && Self.effectivePort(of: components) == Self.effectivePort(of: expected)
            && components.path == expected.path
    }
}
