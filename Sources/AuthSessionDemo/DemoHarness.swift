import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation

/// A handle wired to the test kit, printing a timeline: each input, then every callback it
/// caused, in the order the delegate received them.
final class DemoHarness {

    let clock = ManualClock()
    let provider: MockSessionProvider
    let authenticator = MockBiometricAuthenticator()
    let activation: ManualActivationSignal
    let recorder = RecordingAuthSessionDelegate(label: "auth-session-demo.delegate")
    let handle: AuthSessionHandle<MockSessionProvider>
    private var printedCount = 0

    /// - Parameters:
    ///   - hasApplicationLifecycle: `false` for a command-line client, where the launch counts as
    ///     the first activation.
    ///   - configure: Sets up the provider before the handle exists.
    init(hasApplicationLifecycle: Bool = true, _ configure: (MockSessionProvider, ManualClock) -> Void) {
        activation = ManualActivationSignal(hasApplicationLifecycle: hasApplicationLifecycle)
        provider = MockSessionProvider()
        configure(provider, clock)
        handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: authenticator,
            activationSignal: activation,
            clock: clock
        )
        handle.subscribeDelegate(recorder, receive: recorder.queue)
    }

    // MARK: - Inputs

    /// The provider publishes `event`.
    func publish(_ event: AuthSessionEvent) async {
        await input("provider publishes \(event)") { provider.publish(event) }
    }

    /// The launch: `fetchingSession`, then `sessionFetched(isInitialFetch: true)`.
    func launch() async {
        await publish(.fetchingSession)
        await publish(.sessionFetched(isInitialFetch: true))
    }

    /// The app becomes active.
    func activate() async {
        await input("app becomes active") { activation.fire() }
    }

    /// The UI asks for manual re-authentication.
    func requestManualAuthentication() async {
        await input("user taps \"Try again\" (requestManualAuthentication)") { handle.requestManualAuthentication() }
    }

    /// Time passes on the handle's clock.
    func advanceClock(by seconds: TimeInterval) {
        clock.advance(by: seconds)
        line("  ⏱  \(Int(seconds)) s pass")
    }

    /// The user answers the biometric prompt on screen; the handle reports `callbacks` callbacks.
    func answerPrompt(_ outcome: MockBiometricAuthenticator.Outcome, callbacks: Int) async throws {
        let text =
            switch outcome {
            case .success: "user passes the biometric prompt"
            case .failure(let error): "biometric prompt fails: \(error)"
            }
        try await authenticator.waitForPendingPrompt()
        line("  ▶ \(text)")
        authenticator.resolvePendingPrompt(with: outcome)
        try await recorder.waitForEvents(count: printedCount + callbacks)
        if callbacks > 0 {
            printNewCallbacks()
        }
    }

    /// Prints `text` as an input, runs `action`, and prints the callbacks it caused.
    func input(_ text: String, _ action: () -> Void) async {
        line("  ▶ \(text)")
        action()
        await recorder.drain()
        printNewCallbacks()
    }

    /// Returns once the prompt the handle abandoned has been taken down.
    func waitForPromptToSettle() async {
        await handle.waitForBiometricPrompt()
        line("      (the handle took the prompt down; its outcome will count for nothing)")
    }

    // MARK: - Output

    private func printNewCallbacks() {
        let records = recorder.records
        if records.count == printedCount {
            line("      (no callback)")
        }
        for record in records.dropFirst(printedCount) {
            line("      \(Self.describe(record))")
        }
        printedCount = records.count
    }

    static func describe(_ record: RecordingAuthSessionDelegate.Record) -> String {
        switch record.event {
        case .sessionStatusChanged(let old, let new):
            "status   \(old) → \(new)"
        case .sessionFetch(let isInitial):
            "fetch    completed (\(isInitial ? "launch" : "refresh"))"
        case .login:
            "login    \(record.user?.identifier ?? "unknown user")"
        case .logout(let error):
            "logout   \(error.map { "because \($0.localizedDescription)" } ?? "voluntary")"
        case .failure(let error):
            "failure  \(error.localizedDescription)"
        case .userUpdate:
            // `sessionUpdated`: new tokens (a refresh) or a changed profile, the same event.
            "updated  session (tokens or profile) of \(record.user?.identifier ?? "nobody")"
        }
    }
}

/// Prints one line of the timeline.
func line(_ text: String) {
    print(text)
}
