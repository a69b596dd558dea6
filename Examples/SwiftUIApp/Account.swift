#if canImport(SwiftUI) && canImport(Observation)
import AuthSession
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Observation

#if canImport(AuthenticationServices)
import AuthenticationServices
#endif
#if canImport(UIKit)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// The app's session, made once at launch: the OAuth 2.0 service, the store, the manager, the
/// handle, and the model the views read.
@available(iOS 17, macOS 14, *)
@available(iOSApplicationExtension, unavailable, message: "the example is an app")
@available(macCatalystApplicationExtension, unavailable, message: "the example is an app")
@MainActor
@Observable
final class Account {
    /// What the views show: the handle's state, current on the main actor.
    let session: ObservableAuthSession
    /// The last failure, as a person should read it; `nil` when there is none.
    private(set) var message: String?

    private let oauth: OAuth2Service
    private let provider: ManagedSessionProvider
    private let handle: AuthSessionHandle<ManagedSessionProvider>

    init() {
        oauth = OAuth2Service(
            configuration: OAuth2Configuration(
                issuer: "https://auth.example.com",
                endpoints: OAuth2Endpoints(
                    token: URL(string: "https://auth.example.com/oauth/token")!,
                    authorization: URL(string: "https://auth.example.com/oauth/authorize")!,
                    revocation: URL(string: "https://auth.example.com/oauth/revoke")!
                ),
                client: OAuth2Client(id: "example-app"),
                scope: ["openid", "profile", "offline_access"]
            )
        )
        provider = ManagedSessionProvider(store: Self.makeStore(), remote: oauth)
        // Reads the stored session before it returns: the first frame already knows.
        handle = AuthSessionHandle(sessionProvider: provider)
        session = ObservableAuthSession(handle: handle)
    }

    /// The signed-in user's name, or their identifier.
    var displayName: String {
        provider.session.map { $0.user.name ?? $0.user.identifier } ?? ""
    }

    /// Signs in: in the system's browser sheet on Apple platforms, or through a loopback redirect
    /// and the default browser elsewhere. Closing the sheet is not an error to show.
    func signIn() async {
        message = nil
        do {
            #if canImport(AuthenticationServices)
            let request = try oauth.authorizationRequest(redirectURI: URL(string: "com.example.app:/oauth")!)
            let browser = WebAuthenticationSessionBrowser(presentationContextProvider: SignInAnchor())
            try await provider.signIn(with: browser.grant(for: request))
            #else
            try await provider.signInThroughLoopback(using: oauth) { url in
                print("Sign in at \(url)")
            }
            #endif
        } catch BrowserSignInError.cancelled {
            // The person closed the sheet.
        } catch {
            message = error.localizedDescription  // "Wrong username or password", "You are offline", ...
        }
    }

    /// Signs out: local first, the server is told in the background.
    func signOut() {
        do {
            try provider.signout()
        } catch {
            message = error.localizedDescription
        }
    }

    private static func makeStore() -> any SessionStore {
        #if canImport(Security)
        KeychainSessionStore(service: "com.example.app")
        #else
        (try? FileSessionStore(applicationName: "ExampleApp")) ?? InMemorySessionStore()
        #endif
    }
}

#if canImport(AuthenticationServices)
/// Where the sign-in sheet is presented from: the window the person is using, as
/// `presentationAnchor(for:)` asks ("from which window it should present content to the user").
@available(iOS 17, macOS 14, *)
@available(iOSApplicationExtension, unavailable, message: "the example is an app")
@available(macCatalystApplicationExtension, unavailable, message: "the example is an app")
@MainActor
final class SignInAnchor: NSObject, ASWebAuthenticationPresentationContextProviding {
    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        #if canImport(UIKit)
        // The key window of the scene in the foreground (sign-in starts from a button in it). A
        // window made with `UIWindow()` belongs to no scene and is not on screen (and `init()` is
        // deprecated in iOS 26); one made for the scene is, at worst.
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        guard let scene = scenes.first(where: { $0.activationState == .foregroundActive }) ?? scenes.first else {
            preconditionFailure("a SwiftUI app has a window scene while one of its views starts a sign-in")
        }
        return scene.keyWindow ?? UIWindow(windowScene: scene)
        #else
        // The key window, where the person clicked; a new window if the app has none.
        return NSApplication.shared.keyWindow ?? NSWindow()
        #endif
    }
}
#endif
#endif
