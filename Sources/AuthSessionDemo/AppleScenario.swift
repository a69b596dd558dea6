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
        return await performDemoScenario(
            name,
            setting: "simulated Apple ID provider and in-process backend",
            expectation: expectation,
            make: { try AppleDemoHarness(scenario: name) },
            run: run,
            outcome: { harness in
                let apple = harness.apple
                let backend = harness.backend
                return
                    "Apple: \(apple.authorizationCount) authorization(s), \(apple.redeemedCodeCount) code(s) redeemed, "
                    + "\(apple.tokenRevocationCount) token revocation(s); backend: \(backend.exchangeCount) sign-in(s), "
                    + "\(backend.refreshCount) refresh request(s)"
            }
        )
    }
}
