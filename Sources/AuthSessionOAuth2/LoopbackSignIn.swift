import AuthSessionProviders
import Foundation

extension OAuth2Service {

    /// Runs the authorization-code flow of a command-line or desktop app through a
    /// ``LoopbackRedirectListener``, and returns the grant to exchange.
    ///
    /// It starts the listener, makes the request for its redirect URI
    /// (``authorizationRequest(redirectURI:scope:additionalParameters:)``), checks it with the
    /// server (``checkAuthorizationRequest(_:)``, unless `checksRequestFirst` is `false`: a request
    /// the server refuses fails at once with its reason, and no browser opens), starts waiting for the
    /// redirect that answers the request, hands the authorization URL to `openBrowser` (which may
    /// return at once, or when the browser is done), and checks the redirect
    /// (``AuthorizationRequest/grant(fromRedirect:)``). Cancelling the calling task closes the
    /// listener at once; the call returns when `openBrowser` has returned too, so a closure that
    /// waits for the browser should end when its task is cancelled. The listener is closed
    /// however it ends.
    ///
    /// ```swift
    /// let grant = try await service.authorizeThroughLoopback { url in
    ///     print("Sign in at \(url)")
    /// }
    /// let tokens = try await service.obtainTokens(with: grant)
    /// ```
    ///
    /// - Parameters:
    ///   - path: The redirect URI's path; register `http://127.0.0.1<path>` at the server, which
    ///     must accept any port on it (RFC 8252 §7.3).
    ///   - scope: The scopes; ``OAuth2Configuration/scope`` when `nil`.
    ///   - additionalParameters: More query parameters for the authorization URL.
    ///   - timeout: Seconds to wait for the redirect; 5 minutes by default.
    ///   - checksRequestFirst: Whether to ask the authorization endpoint about the request before
    ///     the browser opens (``checkAuthorizationRequest(_:)``); `true` by default.
    ///   - isolation: The caller's actor, where `openBrowser` runs (an app on the main actor
    ///     passes a closure that touches its views); the caller's by default.
    ///   - openBrowser: Opens the URL in the user's browser (or prints it). An error it throws
    ///     ends the flow with ``BrowserSignInError/presentationFailed(_:)``.
    /// - Returns: The authorization-code grant, with the PKCE verifier and the nonce.
    /// - Throws: ``BrowserSignInError``.
    public func authorizeThroughLoopback(
        path: String = "/callback",
        scope: [String]? = nil,
        additionalParameters: [String: String] = [:],
        timeout: TimeInterval = 300,
        checksRequestFirst: Bool = true,
        isolation: isolated (any Actor)? = #isolation,
        openBrowser: (URL) async throws -> Void
    ) async throws(BrowserSignInError) -> AuthGrant {
        let listener = try LoopbackRedirectListener(path: path, timeout: timeout)
        defer { listener.close() }
        let request: AuthorizationRequest
        do {
            request = try authorizationRequest(
                redirectURI: listener.redirectURI,
                scope: scope,
                additionalParameters: additionalParameters
            )
        } catch {
            throw .request(error)
        }
        if checksRequestFirst {
            try await checkAuthorizationRequest(request)
        }
        // Cancelled before the browser opened: it does not open.
        if Task.isCancelled { throw .cancelled }
        // The wait runs while `openBrowser` does: a closure that returns only once the browser
        // is done (or a test that drives a scripted browser to the listener) is served.
        let waiting = Task { () -> Result<URL, BrowserSignInError> in
            do throws(BrowserSignInError) {
                return .success(try await listener.waitForRedirect(answering: request))
            } catch {
                return .failure(error)
            }
        }
        let outcome = await withTaskCancellationHandler { () async -> Result<URL, BrowserSignInError> in
            do {
                try await openBrowser(request.url)
            } catch {
                listener.close()
                _ = await waiting.value
                if Task.isCancelled || error is CancellationError { return .failure(.cancelled) }
                return .failure(.presentationFailed("the browser could not be opened"))
            }
            return await waiting.value
        } onCancel: {
            listener.close()
        }
        let redirect = try outcome.get()
        do {
            return try request.grant(fromRedirect: redirect)
        } catch {
            throw .redirect(error)
        }
    }
}

extension ManagedSessionProvider {

    /// Signs in through the browser, for a command-line or desktop app: the loopback flow of
    /// ``OAuth2Service/authorizeThroughLoopback(path:scope:additionalParameters:timeout:checksRequestFirst:isolation:openBrowser:)``,
    /// then ``signIn(with:)`` with its authorization-code grant.
    ///
    /// ```swift
    /// let session = try await provider.signInThroughLoopback(using: service) { url in
    ///     print("Sign in at \(url)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service that makes the authorization request; usually the manager's
    ///     ``remote``.
    ///   - path: The redirect URI's path.
    ///   - scope: The scopes; the service's default when `nil`.
    ///   - additionalParameters: More query parameters for the authorization URL.
    ///   - timeout: Seconds to wait for the redirect.
    ///   - checksRequestFirst: Whether to ask the authorization endpoint about the request before
    ///     the browser opens; `true` by default.
    ///   - isolation: The caller's actor, where `openBrowser` runs; the caller's by default.
    ///   - openBrowser: Opens the URL in the user's browser (or prints it).
    /// - Returns: The new session.
    /// - Throws: ``BrowserSignInError``: ``BrowserSignInError/signIn(_:)`` when the exchange or
    ///   the store fails, ``BrowserSignInError/cancelled`` when the task is cancelled.
    @discardableResult
    public func signInThroughLoopback(
        using service: OAuth2Service,
        path: String = "/callback",
        scope: [String]? = nil,
        additionalParameters: [String: String] = [:],
        timeout: TimeInterval = 300,
        checksRequestFirst: Bool = true,
        isolation: isolated (any Actor)? = #isolation,
        openBrowser: (URL) async throws -> Void
    ) async throws(BrowserSignInError) -> ManagedSession {
        let grant = try await service.authorizeThroughLoopback(
            path: path,
            scope: scope,
            additionalParameters: additionalParameters,
            timeout: timeout,
            checksRequestFirst: checksRequestFirst,
            isolation: isolation,
            openBrowser: openBrowser
        )
        do {
            return try await signIn(with: grant)
        } catch .cancelled {
            throw .cancelled
        } catch {
            throw .signIn(error)
        }
    }
}
