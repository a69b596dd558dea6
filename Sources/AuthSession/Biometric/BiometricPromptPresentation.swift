import AuthSessionInterface
import Foundation

/// When a biometric prompt may be presented in this process.
///
/// The system refuses a Face ID or Touch ID prompt from an iOS app that is not in front
/// (`LAError.notInteractive`, "caller is not running foreground"), and an app extension without
/// a user interface (a widget, a notification service) can never present one. A prompt presented
/// then fails, and a failure must never be what ends a session: so the prompt waits until it can
/// be seen, or is not presented at all.
///
/// Used by `LocalAuthenticationBiometricAuthenticator`; the decision and the wait are portable,
/// and tested on every platform.
public enum BiometricPromptPresentation: Hashable, Sendable {

    /// Decided from the process, the default:
    ///
    /// | Process | Rule |
    /// | --- | --- |
    /// | an app with UIKit (iOS, iPadOS, Mac Catalyst, visionOS) | ``whenApplicationActive`` |
    /// | an app extension that shows a user interface (share, action, iMessage, photo editing, AutoFill's credential provider, File Provider actions) | ``immediately`` |
    /// | any other app extension (widgets, notification services, intents, ...) | ``never`` |
    /// | a macOS app, a command-line tool | ``immediately`` |
    case automatic

    /// Waits until the app is active (`UIApplication.State.active`), then presents: a launch in
    /// the background (a silent push, a background refresh) stays gated until the person opens
    /// the app, and the prompt appears then.
    case whenApplicationActive

    /// Presents at once.
    case immediately

    /// Never presents: every authentication fails at once with
    /// `BiometricAuthenticationError.canceledBySystem`, as the system's own "not interactive"
    /// does. A provider that keeps the session on that error (`ManagedSessionProvider` does)
    /// leaves this process locked (manual authentication required) and every other process
    /// signed in.
    case never

    /// The app-extension points whose extensions show a user interface in which a person can
    /// answer a prompt.
    static let interactiveExtensionPoints: Set<String> = [
        "com.apple.share-services",
        "com.apple.ui-services",
        "com.apple.message-payload-provider",
        "com.apple.photo-editing",
        "com.apple.authentication-services-credential-provider-ui",
        "com.apple.authentication-services-account-authentication-modification-ui",
        "com.apple.fileprovider-actionsui",
    ]

    /// The rule for a process (``automatic`` resolved; any other case is itself).
    ///
    /// - Parameters:
    ///   - lifecycle: Who posts this process's activations.
    ///   - isExtension: Whether the process is an app extension.
    ///   - extensionPoint: The extension's `NSExtensionPointIdentifier`, if it is one.
    func resolved(lifecycle: ApplicationLifecycle, isExtension: Bool, extensionPoint: String?) -> Self {
        guard self == .automatic else { return self }
        if isExtension {
            guard let extensionPoint, Self.interactiveExtensionPoints.contains(extensionPoint) else { return .never }
            return .immediately
        }
        return lifecycle == .uiKit ? .whenApplicationActive : .immediately
    }

    /// Waits until a prompt may be presented under this (resolved) rule.
    ///
    /// - Parameter activity: Whether the app is active, and when it becomes so.
    /// - Throws: `BiometricAuthenticationError.canceledBySystem` under ``never``, or when the
    ///   calling task is cancelled while it waits (the handle abandoned the prompt).
    func waitUntilPresentable(activity: any ApplicationActivity) async throws(BiometricAuthenticationError) {
        switch self {
        case .never:
            throw .canceledBySystem
        case .whenApplicationActive:
            guard await activity.waitUntilActive() else { throw .canceledBySystem }
        case .immediately, .automatic:
            break
        }
        if Task.isCancelled {
            throw .canceledBySystem
        }
    }
}

/// Whether the app is active, and a wait until it is: the seam between a biometric prompt and
/// UIKit's application state.
protocol ApplicationActivity: Sendable {

    /// Returns `true` once the app is active (at once if it is), `false` if the calling task is
    /// cancelled first.
    func waitUntilActive() async -> Bool
}

/// An ``ApplicationActivity`` made of the app's "did become active" notification and a read of
/// its state: UIKit's in an app (`UIApplicationDidBecomeActiveNotification`, and
/// `UIApplication.applicationState` read on the main actor), anything in tests.
struct NotificationApplicationActivity: ApplicationActivity {

    /// Whether the app is active now, read on the main actor; `nil` when it cannot say (no
    /// application object), which counts as active: a prompt that cannot be shown fails as
    /// "not interactive", which never ends a session.
    let isActive: @MainActor @Sendable () -> Bool?

    /// The notification posted when the app becomes active.
    let didBecomeActive: Notification.Name

    /// Where it is posted.
    let center: NotificationCenter

    func waitUntilActive() async -> Bool {
        let wake = OneShotSignal()
        // Observe first, then read the state: an activation between the two is not missed.
        let observer = center.addObserver(forName: didBecomeActive, object: nil, queue: nil) { _ in wake.fire() }
        defer { center.removeObserver(observer) }
        if await MainActor.run(body: { isActive() ?? true }) {
            return true
        }
        return await wake.wait()
    }
}

/// A signal fired at most once, that one task waits for; cancelling the task ends the wait.
final class OneShotSignal: Sendable {

    private enum State {
        case idle
        case fired
        case cancelled
        case waiting(CheckedContinuation<Bool, Never>)
    }

    private let state = ConcurrencySafeContainer(State.idle)

    /// Fires the signal: the wait returns `true`.
    func fire() {
        finish(with: true, as: .fired)
    }

    /// Waits for ``fire()``: `true` when it fired, `false` when the calling task was cancelled.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let outcome = state.withLock { state -> Bool? in
                    switch state {
                    case .idle:
                        state = .waiting(continuation)
                        return nil
                    case .fired: return true
                    case .cancelled, .waiting: return false
                    }
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            finish(with: false, as: .cancelled)
        }
    }

    private func finish(with outcome: Bool, as final: State) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            switch state {
            case .idle:
                state = final
                return nil
            case .waiting(let continuation):
                state = final
                return continuation
            case .fired, .cancelled:
                return nil
            }
        }
        waiter?.resume(returning: outcome)
    }
}

extension BiometricPromptPresentation {

    /// ``automatic`` resolved for this process, from its main bundle.
    static let currentProcessRule: Self = {
        let bundle = Bundle.main
        let packageType = bundle.object(forInfoDictionaryKey: "CFBundlePackageType") as? String
        let isExtension = bundle.bundleURL.pathExtension == "appex" || packageType == "XPC!"
        let extensionInfo = bundle.object(forInfoDictionaryKey: "NSExtension") as? [String: Any]
        return Self.automatic.resolved(
            lifecycle: .current,
            isExtension: isExtension,
            extensionPoint: extensionInfo?["NSExtensionPointIdentifier"] as? String
        )
    }()
}
