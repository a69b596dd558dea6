import AuthSession
import AuthSessionMocks

/// One lifecycle story: its inputs, and the final state it must reach.
struct Scenario: Sendable {

    /// What must hold when the scenario ends.
    struct Expectation: Sendable {
        var status: AuthSessionStatus
        /// Every status the handle went through, in order, after `.syncing`.
        var path: [AuthSessionStatus]
        var isManualAuthenticationRequired = false
        var signOutCount = 0
        var promptCount = 0
    }

    let name: String
    let summary: String
    let expectation: Expectation
    /// Whether activations come from an app lifecycle (an app) or not (a command-line client).
    var hasApplicationLifecycle = true
    let configure: @Sendable (MockSessionProvider, ManualClock) -> Void
    let run: @Sendable (DemoHarness) async throws -> Void

    /// Runs the scenario, prints its timeline, and returns the broken expectations (empty when
    /// it passed).
    func perform() async -> [String] {
        line("━━ \(name) ━━ \(summary)")
        let harness = DemoHarness(hasApplicationLifecycle: hasApplicationLifecycle, configure)
        do {
            try await run(harness)
        } catch {
            line("  ✘ \(error)")
            return ["\(name): \(error)"]
        }
        await harness.recorder.drain()
        let failures = check(harness)
        let handle = harness.handle
        if failures.isEmpty {
            line(
                "  ✔ ends \(handle.sessionStatus); manual authentication \(handle.isManualAuthenticationRequired ? "required" : "not required"); "
                    + "\(harness.provider.signOutCount) provider sign-out(s); \(harness.authenticator.promptCount) prompt(s)"
            )
        } else {
            for failure in failures {
                line("  ✘ \(failure)")
            }
        }
        line("")
        return failures.map { "\(name): \($0)" }
    }

    private func check(_ harness: DemoHarness) -> [String] {
        var failures: [String] = []
        func expect<Value: Equatable>(_ what: String, _ actual: Value, _ expected: Value) {
            if actual != expected {
                failures.append("\(what): expected \(expected), got \(actual)")
            }
        }
        expect("status", harness.handle.sessionStatus, expectation.status)
        expect("status path", harness.recorder.statusChanges.map(\.to), expectation.path)
        expect(
            "manual authentication",
            harness.handle.isManualAuthenticationRequired,
            expectation.isManualAuthenticationRequired
        )
        expect("provider sign-outs", harness.provider.signOutCount, expectation.signOutCount)
        expect("biometric prompts", harness.authenticator.promptCount, expectation.promptCount)
        return failures
    }
}
