import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// A provider whose `session` getter, once armed, publishes the next event of a script on each
/// read (a chain of events, each published from inside the read made for the one before); a
/// sign-out in the script clears the session first, as a real provider's would.
private final class ChainPublishingProvider: AuthSessionProviderProtocol {
    private struct State {
        weak var proxy: (any AuthSessionEventProxy)?
        var session: MockSession?
        var script: [AuthSessionEvent] = []
    }
    private let state: ConcurrencySafeContainer<State>

    init(session: MockSession?) {
        state = ConcurrencySafeContainer(State(session: session))
    }

    /// Publishes one event of `script` on each of the next reads.
    func arm(_ script: [AuthSessionEvent]) { state.withLock { $0.script = script } }

    var session: MockSession? {
        let (session, event, proxy) = state.withLock {
            state -> (MockSession?, AuthSessionEvent?, (any AuthSessionEventProxy)?) in
            let session = state.session
            guard !state.script.isEmpty else { return (session, nil, state.proxy) }
            let event = state.script.removeFirst()
            if case .sessionSignedOut = event { state.session = nil }
            return (session, event, state.proxy)
        }
        if let event { proxy?.publish(event) }
        return session
    }

    /// The session now, read without publishing.
    var currentSession: MockSession? { state.withLock { $0.session } }

    /// How many events of the script are still to be published.
    var scriptLeft: Int { state.withLock { $0.script.count } }

    /// Whether events of the script are still to be published.
    var isScriptLeft: Bool { state.withLock { !$0.script.isEmpty } }

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

@Suite("An event the handle drops loses nothing it carried")
struct DroppedEventTests {

    @Test(
        "a getter that publishes a chain of events ending in a sign-out: the handle ends signed out, with one logout, whatever the chain's length",
        arguments: 1...10
    )
    func chainEndingInSignOutSignsOut(length: Int) async throws {
        let clock = ManualClock()
        let session = MockSession(expiresIn: 3600, from: clock.now)
        let provider = ChainPublishingProvider(session: session)
        let recorder = RecordingAuthSessionDelegate()
        let handle = mockHandle(provider, clock: clock)
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        provider.publish(.fetchingSession)
        provider.publish(.sessionFetched(isInitialFetch: true))
        await handle.waitUntilIdle()
        #expect(handle.sessionStatus == .signedIn)

        let updates = Array(repeating: AuthSessionEvent.sessionUpdated(session), count: length - 1)
        provider.arm(updates + [.sessionSignedOut(error: nil)])
        provider.publish(.sessionUpdated(session))
        await handle.waitUntilIdle()
        // What the handle's reads left of the chain, the app's own reads publish.
        while provider.isScriptLeft {
            _ = provider.session
            await handle.waitUntilIdle()
        }

        #expect(provider.currentSession == nil)
        #expect(handle.sessionStatus == .signedOut, "signed in with no session after a chain of \(length)")
        await recorder.drain()
        let logouts = recorder.events.filter { $0.description.hasPrefix("logout") }
        #expect(logouts.count == 1, "\(recorder.events.map(\.description))")
        withExtendedLifetime(handle) {}
    }

    @Test(
        "a getter that publishes a sign-out on every read: the handle still goes idle, signed out, after a bounded number of reads"
    )
    func signOutOnEveryReadIsBounded() async throws {
        let clock = ManualClock()
        let session = MockSession(expiresIn: 3600, from: clock.now)
        let provider = ChainPublishingProvider(session: session)
        let handle = mockHandle(provider, clock: clock)
        provider.publish(.fetchingSession)
        provider.publish(.sessionFetched(isInitialFetch: true))
        await handle.waitUntilIdle()
        provider.arm(Array(repeating: .sessionSignedOut(error: nil), count: 1_000))
        provider.publish(.sessionUpdated(session))
        await handle.waitUntilIdle()
        #expect(handle.sessionStatus == .signedOut)
        #expect(provider.scriptLeft >= 1_000 - 2 - InputQueue.maximumReconcileRun, "a bounded number of reads")
        withExtendedLifetime(handle) {}
    }
}
