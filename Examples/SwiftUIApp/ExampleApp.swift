// A small SwiftUI app that keeps its session with AuthSessionKit: the managed setup, a root view
// that never shows sign-in while the launch is deciding, browser sign-in, sign-out, and messages
// a person can read. CI compiles it (.ci/check-snippets), on Linux against a SwiftUI stand-in.
#if canImport(SwiftUI)
import SwiftUI

@available(iOS 17, macOS 14, *)
@available(iOSApplicationExtension, unavailable, message: "the example is an app")
@available(macCatalystApplicationExtension, unavailable, message: "the example is an app")
@main
struct ExampleApp: App {
    private let account = Account()

    var body: some Scene {
        WindowGroup {
            RootView(account: account)
        }
    }
}
#else
@main
enum ExampleApp {
    static func main() {}
}
#endif
