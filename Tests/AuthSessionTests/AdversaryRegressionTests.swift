import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// A conformer of the contract that implements only the delegate API, over a real handle: it
/// gets the protocol's default `statusUpdates()`.
private final class ForwardingHandle: AuthSessionHandleProtocol {
    let inner: AuthSessionHandle<MockSessionProvider>

    init(inner: AuthSessionHandle<MockSessionProvider>) {
        self.inner = inner
    }

    init(sessionProvider: MockSessionProvider) {
        inner = AuthSessionHandle(sessionProvider: sessionProvider)
    }

    var sessionProvider: MockSessionProvider { inner.sessionProvider }
    var session: MockSession? { inner.session }
    var sessionStatus: AuthSessionStatus { inner.sessionStatus }
    var isBiometricAuthenticationInProcess: Bool { inner.isBiometricAuthenticationInProcess }
    var isManualAuthenticationRequired: Bool { inner.isManualAuthenticationRequired }
    func requestManualAuthentication() { inner.requestManualAuthentication() }
    func subscribeDelegate(_ delegate: any AuthSessionDelegate, receive queue: DispatchQueue) {
        inner.subscribeDelegate(delegate, receive: queue)
    }
    func unsubscribeDelegate(_ delegate: any AuthSessionDelegate) { inner.unsubscribeDelegate(delegate) }
}

/// A provider whose `session` getter, when armed, publishes a sign-in (re-entrantly: the
/// handle is applying an input on this very thread) and records the status right after.
private final class ReentrantProvider: AuthSessionProviderProtocol {
    private struct State {
        weak var proxy: (any AuthSessionEventProxy)?
        var isArmed = false
        var statusAfterPublish: AuthSessionStatus?
    }
    private let state = ConcurrencySafeContainer(State())
    let handle = ConcurrencySafeContainer<AuthSessionHandle<ReentrantProvider>?>(nil)

    func arm() { state.withLock { $0.isArmed = true } }
    var statusAfterPublish: AuthSessionStatus? { state.withLock { $0.statusAfterPublish } }

    var session: MockSession? {
        let (armed, proxy) = state.withLock { state in
            defer { state.isArmed = false }
            return (state.isArmed, state.proxy)
        }
        if armed {
            proxy?.publish(.sessionSignIn)
            let status = handle.withLock { $0 }?.sessionStatus
            state.withLock { $0.statusAfterPublish = status }
        }
        return MockSession(expiresIn: 3600)
    }
    var isBioMetricAuthenticationEnabled: Bool { false }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) { state.withLock { $0.proxy }?.publish(event) }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {}
    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

@Suite("Holes found by the second adversarial review")
struct AdversaryRegressionTests {

    @Test("the contract's default statusUpdates never goes back in time, even when changes race the call")
    func defaultStatusUpdatesNeverGoBack() async {
        let trials = 3_000
        var backwards = 0
        let history: [AuthSessionStatus] = [.signedIn, .syncing, .signedOut, .signedIn]
        for _ in 0..<trials {
            let provider = MockSessionProvider(session: MockSession(expiresIn: 3600))
            let inner = mockHandle(provider)
            provider.publish(.sessionSignIn)
            let handle = ForwardingHandle(inner: inner)
            let stream = handle.statusUpdates()  // the protocol's default
            provider.publish(.fetchingSession)
            provider.publish(.sessionSignedOut(error: nil))
            provider.publish(.sessionSignIn)
            var seen: [AuthSessionStatus] = []
            for await status in stream {
                seen.append(status)
                if status == .signedIn && seen.contains(.signedOut) { break }
            }
            // What it yields must be a run of the real history, from some point on.
            if !(0..<history.count).contains(where: { Array(history[$0...]).starts(with: seen) }) {
                backwards += 1
            }
            withExtendedLifetime(handle) {}
        }
        #expect(backwards == 0, "\(backwards) of \(trials) sequences went back in time")
    }

    @Test("a publish from inside a provider call is applied right after the step that made the call")
    func reentrantPublishIsAppliedNext() {
        let provider = ReentrantProvider()
        let handle = mockHandle(provider)
        provider.handle.withLock { $0 = handle }
        provider.publish(.sessionSignedOut(error: nil))
        provider.arm()
        provider.publish(.sessionUpdated(nil))  // its read of the session publishes a sign-in
        #expect(provider.statusAfterPublish == .signedOut, "queued: this thread is applying an input")
        #expect(handle.sessionStatus == .signedIn, "applied before the outer publish returned")
    }
}

/// A main-actor delegate whose `deinit` calls the handle's main-actor API, as a coordinator's
/// `deinit` tearing down a child might. Its conformance is declared in an extension, so that it
/// can be created on any thread.
private final class TearingDownParent: @unchecked Sendable {
    // @unchecked: the stored properties are constants, set once in `init`.
    let handle: AuthSessionHandle<MockSessionProvider>
    let child: any MainActorAuthSessionDelegate

    init(handle: AuthSessionHandle<MockSessionProvider>, child: any MainActorAuthSessionDelegate) {
        self.handle = handle
        self.child = child
    }

    deinit {
        handle.unsubscribeDelegate(child)
        handle.subscribeDelegate(child)
    }
}
extension TearingDownParent: MainActorAuthSessionDelegate {}

private final class Filler: Sendable {}
extension Filler: MainActorAuthSessionDelegate {}

extension ConcurrencyLoad {

    @Suite("Main-actor delegates released while the stand-ins are swept")
    struct AdapterSweepLoadTests {

        @Test("a main-actor delegate released during a sweep runs its deinit with no lock held: no deadlock")
        func deinitDuringSweep() async {
            let handle = mockHandle(MockSessionProvider(session: MockSession(expiresIn: 3600)))
            let child = Filler()
            handle.subscribeDelegate(child)
            let rounds = ConcurrencySafeContainer(0)
            let finished = await onParallelThreads(2, timeout: 60) { thread in
                if thread == 0 {
                    // Parents live while the other thread sweeps, then are released one by one.
                    for _ in 0..<1_500 {
                        var parents = (0..<16).map { _ in TearingDownParent(handle: handle, child: child) }
                        for parent in parents {
                            handle.subscribeDelegate(parent)
                        }
                        while !parents.isEmpty { parents.removeLast() }
                        rounds.withLock { $0 += 1 }
                    }
                } else {
                    // Each subscription of a new delegate may sweep the stand-ins of dead ones.
                    while rounds.withLock({ $0 }) < 1_500 {
                        handle.subscribeDelegate(Filler())
                    }
                }
            }
            #expect(finished, "deadlocked: a deinit ran under the stand-ins' lock")
        }
    }
}
