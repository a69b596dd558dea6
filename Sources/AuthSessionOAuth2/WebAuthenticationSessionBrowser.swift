#if canImport(AuthenticationServices) && !os(tvOS) && !os(watchOS)
import AuthSessionProviders
import AuthenticationServices
import Foundation

/// Presents an ``AuthorizationRequest`` in `ASWebAuthenticationSession` and returns the redirect.
///
/// ```swift
/// let browser = WebAuthenticationSessionBrowser(presentationContextProvider: windowProvider)
/// let request = try service.authorizationRequest(redirectURI: URL(string: "com.example.app:/oauth")!)
/// let grant = try await browser.grant(for: request)
/// try await provider.signIn(with: grant)
/// ```
///
/// - **Redirect URI**: a custom scheme (`com.example.app:/oauth`) works on every supported
///   system; an `https` one (an associated domain of the app) needs iOS 17.4 or macOS 14.4 and
///   fails earlier with ``BrowserSignInError/unsupportedRedirectURI(_:)``. An `http` loopback
///   redirect is for ``LoopbackRedirectListener``.
/// - **Cancellation**: the person closing the sheet is ``BrowserSignInError/cancelled``
///   (`ASWebAuthenticationSessionError.canceledLogin`); so is cancelling the calling task, which
///   dismisses the sheet.
/// - **Ephemeral**: ``prefersEphemeralWebBrowserSession`` asks the browser not to share cookies
///   with Safari (no "wants to use ... to sign in" prompt, no single sign-on).
///
/// The decisions (the callback for a redirect URI, the error for each code, one answer per
/// session) are made by portable code tested on every platform; this type only performs them.
@MainActor
public final class WebAuthenticationSessionBrowser {

    /// The window the sheet is presented from; kept for as long as the browser (the session
    /// holds it weakly).
    public let presentationContextProvider: any ASWebAuthenticationPresentationContextProviding

    /// Whether the session asks for a private browser session, without the browser's cookies.
    public let prefersEphemeralWebBrowserSession: Bool

    /// Creates a browser.
    ///
    /// - Parameters:
    ///   - presentationContextProvider: Gives the window to present from.
    ///   - prefersEphemeralWebBrowserSession: Whether to ask for a private browser session.
    public init(
        presentationContextProvider: any ASWebAuthenticationPresentationContextProviding,
        prefersEphemeralWebBrowserSession: Bool = false
    ) {
        self.presentationContextProvider = presentationContextProvider
        self.prefersEphemeralWebBrowserSession = prefersEphemeralWebBrowserSession
    }

    /// Presents `request`'s URL and returns the redirect the session caught, unchecked.
    ///
    /// - Parameter request: The authorization request.
    /// - Returns: The redirect URL; check it with ``AuthorizationRequest/grant(fromRedirect:)``.
    /// - Throws: ``BrowserSignInError``: ``BrowserSignInError/cancelled``,
    ///   ``BrowserSignInError/presentationFailed(_:)``,
    ///   ``BrowserSignInError/unsupportedRedirectURI(_:)``.
    public func redirect(for request: AuthorizationRequest) async throws(BrowserSignInError) -> URL {
        let callback = try WebAuthenticationCallback(redirectURI: request.redirectURI)
        let provider = presentationContextProvider
        let ephemeral = prefersEphemeralWebBrowserSession
        return try await WebAuthenticationRun.run(sessionErrorDomain: ASWebAuthenticationSessionErrorDomain) {
            completion throws(BrowserSignInError) in
            let session: ASWebAuthenticationSession
            if #available(iOS 17.4, macOS 14.4, *) {
                let watched: ASWebAuthenticationSession.Callback
                switch callback {
                case .customScheme(let scheme): watched = .customScheme(scheme)
                case .https(let host, let path): watched = .https(host: host, path: path)
                }
                session = ASWebAuthenticationSession(url: request.url, callback: watched, completionHandler: completion)
            } else {
                guard case .customScheme(let scheme) = callback else {
                    throw .unsupportedRedirectURI("an https redirect needs iOS 17.4 or macOS 14.4")
                }
                session = ASWebAuthenticationSession(
                    url: request.url,
                    callbackURLScheme: scheme,
                    completionHandler: completion
                )
            }
            session.presentationContextProvider = provider
            session.prefersEphemeralWebBrowserSession = ephemeral
            return WebAuthenticationSessionDriver(session)
        }
    }

    /// Presents `request`'s URL and checks the redirect: the grant to exchange.
    ///
    /// - Parameter request: The authorization request.
    /// - Returns: The authorization-code grant.
    /// - Throws: ``BrowserSignInError``; ``BrowserSignInError/redirect(_:)`` when the redirect is
    ///   refused or carries the server's error.
    public func grant(for request: AuthorizationRequest) async throws(BrowserSignInError) -> AuthGrant {
        let redirect = try await redirect(for: request)
        do {
            return try request.grant(fromRedirect: redirect)
        } catch {
            throw .redirect(error)
        }
    }
}

/// `ASWebAuthenticationSession` as the portable run drives it.
@MainActor
private final class WebAuthenticationSessionDriver: WebAuthenticationSessionDriving {
    private let session: ASWebAuthenticationSession

    init(_ session: ASWebAuthenticationSession) {
        self.session = session
    }

    func start() -> Bool { session.start() }

    func cancel() { session.cancel() }
}
#endif
