import AuthSession
import Foundation

/// One session-manager story: a `ManagedSessionProvider` on a `FileSessionStore` in a fresh
/// temporary folder, an authorization server, and the final state it must reach.
struct ManagerScenario: Sendable {

    /// What must hold when the scenario ends, for the app running then.
    struct Expectation: Sendable {
        var status: AuthSessionStatus
        /// Every status change the app's delegate received, in order (it subscribes right after
        /// the handle's creation, so a launch's own change is not among them).
        var path: [AuthSessionStatus]
        var logoutCount = 0
    }

    let name: String
    let summary: String
    let expectation: Expectation
    let run: @Sendable (ManagerDemoHarness) async throws -> Void

    /// Runs the scenario against `backend`, prints its timeline, and returns the broken
    /// expectations (empty when it passed).
    func perform(on backend: BackendChoice) async -> [String] {
        line("━━ \(name) ━━ \(summary)")
        let server = DemoBackend(backend)
        return await performDemoScenario(
            name,
            setting: server.title,
            expectation: expectation,
            make: { try ManagerDemoHarness(scenario: name, backend: server) },
            run: run,
            outcome: { _ in "server: \(server.signInCount) sign-in(s), \(server.refreshCount) refresh request(s)" }
        )
    }
}
