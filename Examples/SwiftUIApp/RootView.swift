#if canImport(SwiftUI)
import AuthSession
import SwiftUI

/// The screen follows the session: a spinner while the launch decides (a signed-in user never
/// sees the sign-in screen flash), the account when signed in, sign-in otherwise.
@available(iOS 17, macOS 14, *)
@available(iOSApplicationExtension, unavailable, message: "the example is an app")
@available(macCatalystApplicationExtension, unavailable, message: "the example is an app")
struct RootView: View {
    let account: Account

    var body: some View {
        if account.session.isLoading {
            ProgressView()
        } else if account.session.isSignedIn {
            VStack {
                Text("Signed in as \(account.displayName)")
                Button("Sign out") { account.signOut() }
            }
        } else {
            VStack {
                Text(account.message ?? "Please sign in")
                Button("Sign in") { Task { await account.signIn() } }
            }
        }
    }
}
#endif
