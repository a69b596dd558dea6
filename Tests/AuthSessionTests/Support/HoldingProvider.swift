import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// A provider whose reads can be slowed down or held, to put another input between a step's read
/// of the world and the step itself, the way a second thread would.
final class HoldingProvider: AuthSessionProviderProtocol {
    private struct State {
        var session: MockSession?
        var isBiometricEnabled: Bool
        weak var proxy: (any AuthSessionEventProxy)?
        /// Called, then waited on, by the next read of `session`.
        var holdNextSessionRead: (entered: @Sendable () -> Void, release: DispatchSemaphore)?
        var readDelay: TimeInterval = 0
        var policyReads = 0
        var onPolicyRead: (@Sendable (Int) -> Void)?
    }
    private let state: ConcurrencySafeContainer<State>

    init(session: MockSession?, biometric: Bool = false) {
        state = ConcurrencySafeContainer(State(session: session, isBiometricEnabled: biometric))
    }

    /// The next read of `session` calls `entered`, then blocks until `release` is signalled.
    func holdNextSessionRead(entered: @escaping @Sendable () -> Void, release: DispatchSemaphore) {
        state.withLock { $0.holdNextSessionRead = (entered, release) }
    }

    /// Every `canPerformAuthentication()` takes this long, as `LAContext.canEvaluatePolicy` does.
    func slowDownPolicyReads(by seconds: TimeInterval) {
        state.withLock { $0.readDelay = seconds }
    }

    /// Calls `observer` with the count each time `canPerformAuthentication()` is entered.
    func onPolicyRead(_ observer: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.onPolicyRead = observer }
    }

    /// How many times `canPerformAuthentication()` has been entered.
    var policyReads: Int { state.withLock { $0.policyReads } }

    func setSession(_ session: MockSession?) {
        state.withLock { $0.session = session }
    }

    var session: MockSession? {
        let (session, hold) = state.withLock { state in
            defer { state.holdNextSessionRead = nil }
            return (state.session, state.holdNextSessionRead)
        }
        if let hold {
            hold.entered()
            hold.release.wait()
        }
        return session
    }

    var isBioMetricAuthenticationEnabled: Bool { state.withLock { $0.isBiometricEnabled } }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) {
        state.withLock { $0.proxy }?.publish(event)
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {
        state.withLock { $0.isBiometricEnabled = isEnabled }
    }
    func signout(with error: (any Error)?) throws {
        let proxy = state.withLock { state in
            state.session = nil
            return state.proxy
        }
        proxy?.publish(.sessionSignedOut(error: error))
    }
    func preferredAuthenticationReason() -> String { "Unlock" }
    func canPerformAuthentication() -> Bool {
        let (delay, enabled, reads, observer) = state.withLock { state in
            state.policyReads += 1
            return (state.readDelay, state.isBiometricEnabled, state.policyReads, state.onPolicyRead)
        }
        observer?(reads)
        if delay > 0 {
            Thread.sleep(forTimeInterval: delay)
        }
        return enabled
    }
}
