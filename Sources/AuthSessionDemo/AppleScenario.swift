import AuthSession
import Foundation

/// One Sign in with Apple story: a `ManagedSessionProvider` on a `SignInWithAppleService`, a
/// `FileSessionStore` in a fresh temporary folder, a simulated Apple and an in-process backend,
/// and the final state it must reach.
///
/// It needs no authorization server, so it runs in process only: not with `--oauth-server`.
struct AppleScenario: Sendable {

    let name: String
    let summary: String
    /// What must hold when the scenario ends, for the app running then.
    let expectation: ManagerScenario.Expectation
    let run: @Sendable (AppleDemoHarness) async throws -> Void

    /// Runs the scenario, prints its timeline, and returns the broken expectations (empty when it
    /// passed).
    func perform() async -> [String] {
        line("━━ \(name) ━━ \(summary)")
        let harness: AppleDemoHarness
        do {
            harness = try AppleDemoHarness(scenario: name)
        } catch {
            line("  ✘ cannot create the temporary folder: \(error)")
            return ["\(name): \(error)"]
        }
        defer { harness.cleanUp() }
        line("  (simulated Apple ID provider and in-process backend; session file in a fresh temporary folder)")
        do {
            try await run(harness)
        } catch {
            line("  ✘ \(error)")
            return ["\(name): \(error)"] + harness.failures.map { "\(name): \($0)" }
        }
        await harness.app.settle()
        let app = harness.app
        let failures = expectation.failures(of: app, recorded: harness.failures)
        if failures.isEmpty {
            let apple = harness.apple
            let backend = harness.backend
            line(
                "  ✔ ends \(app.handle.sessionStatus); \(app.logoutCount) logout(s); Apple: "
                    + "\(apple.authorizationCount) authorization(s), \(apple.redeemedCodeCount) code(s) redeemed, "
                    + "\(apple.tokenRevocationCount) token revocation(s); backend: \(backend.exchangeCount) sign-in(s), "
                    + "\(backend.refreshCount) refresh request(s)"
            )
        }
        line("")
        return failures.map { "\(name): \($0)" }
    }
}
