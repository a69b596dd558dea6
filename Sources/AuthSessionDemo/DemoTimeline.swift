import AuthSessionInterface
import AuthSessionMocks
import Foundation

/// What every session-manager scenario's harness prints and checks with: the clock it moves, the
/// failures its checks record.
protocol DemoTimeline: AnyObject {
    /// The clock the scenario's manager runs on.
    var clock: ManualClock { get }
    /// The checks that failed, in order.
    var failures: [String] { get set }
    /// The app running now.
    var app: DemoApp { get }
    /// The scenario's temporary folder.
    var root: URL { get }
    /// Prints the events and callbacks since the last time; whether there were any.
    @discardableResult func printNew() -> Bool
    /// An event as the timeline names it.
    func describe(_ event: AuthSessionEvent) -> String
}

extension DemoTimeline {

    /// A fresh temporary folder for `scenario`.
    static func makeTemporaryFolder(for scenario: String) throws -> URL {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("auth-session-demo-\(scenario)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    /// Removes the temporary folder.
    func cleanUp() {
        try? FileManager.default.removeItem(at: root)
    }

    /// Prints the launch that happened when the harness (or its relaunch) created the app.
    func printLaunch(_ text: String) async {
        line("  ▶ \(text)")
        await app.settle()
        let during = app.eventsDuringInit.map(describe).joined(separator: ", ")
        line("      manager  published inside AuthSessionHandle.init: \(during.isEmpty ? "nothing" : during)")
        line("      status   syncing → \(app.statusAfterInit)   (when AuthSessionHandle.init returned)")
        printNew()
    }

    /// Moves the clock `seconds` forward.
    func advanceClock(by seconds: TimeInterval, _ why: String) {
        clock.advance(by: seconds)
        line("  ⏱  \(Int(seconds.rounded())) s pass: \(why)")
    }

    /// Returns once `condition` holds; throws after `timeout` real seconds.
    func waitUntil(
        _ what: String,
        timeout: TimeInterval = 15,
        _ condition: () -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw DemoError("timed out waiting for \(what)") }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    /// Records a failure unless `condition` holds; prints the check either way.
    func check(_ claim: String, _ condition: Bool, _ detail: @autoclosure () -> String = "") {
        if condition {
            line("      ✔ \(claim)")
        } else {
            let text = detail()
            line("      ✘ \(claim)\(text.isEmpty ? "" : ": \(text)")")
            failures.append(claim + (text.isEmpty ? "" : ": \(text)"))
        }
    }

    /// Prints `text` as a note under the current step.
    func note(_ text: String) {
        line("      \(text)")
    }
}

/// Runs a session-manager scenario's steps on the harness `make` creates (its temporary folder
/// removed afterwards), then checks `expectation` for the app running at the end. Prints
/// `setting` first and, when every expectation holds, the end state with `outcome`'s counts.
/// Returns the broken expectations, each prefixed with `name` (empty when it passed).
func performDemoScenario<Harness: DemoTimeline>(
    _ name: String,
    setting: String,
    expectation: ManagerScenario.Expectation,
    make: () throws -> Harness,
    run: (Harness) async throws -> Void,
    outcome: (Harness) -> String
) async -> [String] {
    let harness: Harness
    do {
        harness = try make()
    } catch {
        line("  ✘ cannot create the temporary folder: \(error)")
        return ["\(name): \(error)"]
    }
    defer { harness.cleanUp() }
    line("  (\(setting); session file in a fresh temporary folder)")
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
        line("  ✔ ends \(app.handle.sessionStatus); \(app.logoutCount) logout(s); \(outcome(harness))")
    }
    line("")
    return failures.map { "\(name): \($0)" }
}

extension ManagerScenario.Expectation {

    /// The failures of a scenario that ran to its end: `recorded` (its checks') and every
    /// expectation `app` does not meet, each printed once.
    func failures(of app: DemoApp, recorded: [String]) -> [String] {
        var failures = recorded
        func expect<Value: Equatable>(_ what: String, _ actual: Value, _ expected: Value) {
            if actual != expected {
                failures.append("\(what): expected \(expected), got \(actual)")
            }
        }
        expect("status", app.handle.sessionStatus, status)
        expect("status path", app.recorder.statusChanges.map(\.to), path)
        expect("logouts", app.logoutCount, logoutCount)
        for failure in failures where !recorded.contains(failure) {
            line("  ✘ \(failure)")
        }
        return failures
    }
}
