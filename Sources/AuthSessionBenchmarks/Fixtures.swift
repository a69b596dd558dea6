import AuthSession
import AuthSessionInterface
import Dispatch
import Foundation

struct BenchUser: AuthSessionUserProtocol {
    let identifier: String
}

struct BenchSession: AuthSessionProtocol {
    let accessToken: String
    let expiresAt: TimeInterval
    let user: BenchUser
}

/// A provider that answers at once and keeps the handle's proxy, as a lean real provider would.
final class BenchProvider: AuthSessionProviderProtocol {
    let session: BenchSession? = BenchSession(
        accessToken: "bench",
        expiresAt: Date().timeIntervalSince1970 + 86_400,
        user: BenchUser(identifier: "bench")
    )
    private let proxy = ConcurrencySafeContainer<(any AuthSessionEventProxy)?>(nil)

    var isBioMetricAuthenticationEnabled: Bool { false }

    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        proxy.withLock { $0 = eventProxy }
    }

    /// The handle's proxy; read once and reused, as a provider keeps it.
    var eventProxy: (any AuthSessionEventProxy)? { proxy.withLock { $0 } }

    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {}
    func preferredAuthenticationReason() -> String { "Bench" }
    func canPerformAuthentication() -> Bool { false }
}

/// Counts down to zero and then wakes whoever waits.
final class Countdown: Sendable {
    private let remaining = ConcurrencySafeContainer(0)
    private let done = DispatchSemaphore(value: 0)

    func reset(to count: Int) {
        remaining.withLock { $0 = count }
    }

    func tick() {
        let left = remaining.withLock { remaining in
            remaining -= 1
            return remaining
        }
        if left == 0 {
            done.signal()
        }
    }

    func wait() {
        done.wait()
    }
}

/// A delegate that ticks a countdown on every status change.
final class CountingDelegate: AuthSessionDelegate {
    let countdown: Countdown

    init(countdown: Countdown) {
        self.countdown = countdown
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        countdown.tick()
    }
}

/// A weak reference to a delegate, as a bare registry keeps one.
struct WeakDelegate: Sendable {
    weak var delegate: (any AuthSessionDelegate)?

    init(_ delegate: any AuthSessionDelegate) {
        self.delegate = delegate
    }
}

/// An activation signal that never fires, so a benchmark handle has no outside input.
struct SilentActivationSignal: AppActivationSignal {
    func observe(_ handler: @escaping @Sendable () -> Void) -> AppActivationObservation {
        AppActivationObservation {}
    }
}

/// A handle on a `BenchProvider` with no outside inputs.
func makeBenchHandle() -> (AuthSessionHandle<BenchProvider>, BenchProvider) {
    let provider = BenchProvider()
    let handle = AuthSessionHandle(
        sessionProvider: provider,
        biometricAuthenticator: SimulatedBiometricAuthenticator(outcome: .success),
        activationSignal: SilentActivationSignal(),
        clock: SystemClock()
    )
    return (handle, provider)
}
