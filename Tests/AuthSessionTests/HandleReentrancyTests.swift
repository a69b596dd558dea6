import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// Waits for `handle` to be idle, or `timeout` seconds, a safety net that turns a handle that
/// never goes idle into a failure instead of a hung test run.
///
/// - Returns: `false` if the handle was not idle in time.
private func waitUntilIdle<Provider>(
    _ handle: AuthSessionHandle<Provider>,
    timeout: TimeInterval = 60
) async -> Bool {
    let outcome = ConcurrencySafeContainer<CheckedContinuation<Bool, Never>?>(nil)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        outcome.withLock { $0 = continuation }
        Task {
            await handle.waitUntilIdle()
            outcome.withLock { $0.take() }?.resume(returning: true)
        }
        Thread {
            Thread.sleep(forTimeInterval: timeout)
            outcome.withLock { $0.take() }?.resume(returning: false)
        }
        .start()
    }
}

/// A provider whose `session` getter publishes `sessionUpdated`, with the session it returns,
/// every time it is read. Counts those publishes.
private final class PublishingGetterProvider: AuthSessionProviderProtocol {
    private struct State {
        weak var proxy: (any AuthSessionEventProxy)?
        var session: MockSession?
        var publishCount = 0
    }
    private let state: ConcurrencySafeContainer<State>

    init(session: MockSession?) {
        state = ConcurrencySafeContainer(State(session: session))
    }

    /// How many events the getter has published so far.
    var publishCount: Int { state.withLock { $0.publishCount } }

    var session: MockSession? {
        let (session, proxy) = state.withLock { state in
            state.publishCount += 1
            return (state.session, state.proxy)
        }
        proxy?.publish(.sessionUpdated(session))
        return session
    }

    /// Publishes `event` as the provider's own code would, outside any getter.
    func publish(_ event: AuthSessionEvent) { state.withLock { $0.proxy }?.publish(event) }

    var isBioMetricAuthenticationEnabled: Bool { false }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {
        state.withLock { $0.session = nil }
        publish(.sessionSignedOut(error: error))
    }
    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

/// Providers that call back into the handle from inside the handle's own calls to them.
@Suite("Handle re-entrancy")
struct HandleReentrancyTests {

    @Test("a session getter that publishes on every read: the handle goes idle after a bounded number of steps")
    func publishingSessionGetterGoesIdle() async {
        let clock = ManualClock()
        let provider = PublishingGetterProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let recorder = RecordingAuthSessionDelegate()
        let handle = mockHandle(provider, clock: clock)
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        provider.publish(.fetchingSession)
        provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(await waitUntilIdle(handle), "the handle never went idle")
        // Each read publishes once; the event published from inside an input's read is applied
        // after that input, and the one published from inside the read made for that event is
        // dropped. Subscribing reads the session (1), and what that publishes is applied with its
        // echo (2, 3); then each of the two launch events and its echo (4 to 7).
        #expect(provider.publishCount == 7)
        #expect(handle.sessionStatus == .signedIn)
        await recorder.drain()
        #expect(
            recorder.events.map(\.description) == [
                "userUpdate", "statusChanged(syncing → validating)", "statusChanged(validating → signedIn)",
                "sessionFetch(initial)", "userUpdate",
            ]
        )
        // Idle for good: nothing more arrives on its own.
        await handle.waitUntilIdle()
        #expect(provider.publishCount == 7)
        // Later inputs cost the same bounded work, and the handle is idle again after each.
        let before = provider.publishCount
        for _ in 0..<10 {
            provider.publish(.sessionFetched(isInitialFetch: false))
        }
        #expect(await waitUntilIdle(handle), "the handle never went idle")
        #expect(provider.publishCount - before == 20)
        await recorder.drain()
        #expect(isChain(recorder.statusChanges, from: .syncing))
        withExtendedLifetime(handle) {}
    }
}
