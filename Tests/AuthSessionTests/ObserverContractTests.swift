import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession
@testable import AuthSessionInterface

/// A coordinator as a Swift 6 app writes it: a main-actor class, no `nonisolated`, no
/// `assumeIsolated`.
@MainActor
private final class AppCoordinator: MainActorAuthSessionDelegate {
    var screen = "splash"
    var log: [String] = []

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        log.append("start \(sessionStatus)")
        show(sessionStatus)
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        log.append("\(oldStatus) → \(sessionStatus)")
        show(sessionStatus)
    }

    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {
        log.append("logout")
    }

    private func show(_ status: any AuthSessionStatusProtocol) {
        screen = status.isSignedIn ? "home" : status.isSignedOut ? "sign-in" : "splash"
    }
}

/// Lets everything already on the main queue run.
@MainActor
private func drainMain() async {
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
}

@Suite("Observers: main-actor delegates, the state on joining, activations without a lifecycle")
struct ObserverContractTests {

    // MARK: 14

    @Test("14. a @MainActor coordinator observes a handle directly, starting from the current status")
    @MainActor
    func mainActorCoordinator() async {
        let harness = Harness(subscribe: false)
        harness.launch()
        let coordinator = AppCoordinator()
        harness.handle.subscribeDelegate(coordinator)
        harness.provider.publish(.sessionSignedOut(error: nil))
        await drainMain()
        #expect(coordinator.log == ["start signedIn", "signedIn → signedOut", "logout"])
        #expect(coordinator.screen == "sign-in")

        harness.handle.unsubscribeDelegate(coordinator)
        harness.provider.publish(.sessionSignIn)
        await drainMain()
        #expect(coordinator.screen == "sign-in", "nothing after unsubscribing on the main actor")
    }

    @Test("14. the stand-in for a main-actor delegate goes with the delegate")
    @MainActor
    func mainActorDelegateIsHeldWeakly() async {
        let harness = Harness(subscribe: false)
        var coordinator: AppCoordinator? = AppCoordinator()
        weak var released: AppCoordinator?
        released = coordinator
        harness.handle.subscribeDelegate(coordinator!)
        #expect(MainActorDelegateAdapters.count(for: harness.handle) == 1)
        coordinator = nil
        #expect(released == nil, "the handle does not keep a main-actor delegate alive")
        harness.provider.publish(.sessionSignIn)  // its next delivery finds it gone
        await drainMain()
        #expect(MainActorDelegateAdapters.count(for: harness.handle) == 0)
        #expect(harness.handle.subscriberCount == 0)
    }

    // MARK: 16

    @Test("16. a delegate subscribed after a synchronous restore learns the status, then the chain from it")
    func delegateLearnsTheLaunch() async throws {
        let clock = ManualClock()
        let provider = MockSessionProvider(
            session: MockSession(expiresIn: 3600, from: clock.now),
            eventsOnInitialize: [.fetchingSession, .sessionFetched(isInitialFetch: true)]
        )
        let handle = mockHandle(provider, clock: clock)
        #expect(handle.sessionStatus == .signedIn, "settled before anyone could subscribe")

        let recorder = RecordingAuthSessionDelegate()
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        #expect(try await recorder.waitForStartingStatus() == .signedIn)
        #expect(recorder.events.isEmpty, "not one of the six callbacks: nothing is repeated")

        provider.publish(.sessionSignedOut(error: nil))
        try await recorder.waitForStatus(.signedOut)
        #expect(recorder.statusChanges == [.init(from: .signedIn, to: .signedOut)], "the chain starts there")
    }

    @Test("16. the private listener learns the status on joining, before any event")
    @MainActor
    func privateListenerLearnsTheLaunch() async {
        let harness = Harness(subscribe: false)
        harness.launch()
        var heard: [String] = []
        let listener = SessionDelegateEventProxy(
            currentStatus: { heard.append("joined \($0)") },
            eventListening: { heard.append("\($0)") }
        )
        harness.handle.subscribeEventPublisher(listener, receive: .global())  // still delivered on main
        harness.provider.publish(.sessionSignedOut(error: nil))
        await drainMain()
        #expect(heard == ["joined signedIn", "statusChanged(signedIn → signedOut)", "logout(nil)"])
    }

    // MARK: 17

    @Test("17. without an app lifecycle the launch counts as the first activation")
    func launchCountsAsActivation() {
        let center = NotificationCenter()
        let clock = ManualClock()
        let provider = MockSessionProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let handle = mockHandle(
            provider,
            activation: NotificationCenterActivationSignal(center: center, hasApplicationLifecycle: false),
            clock: clock
        )
        provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(handle.sessionStatus == .signedIn)

        // The client's first return to the foreground, with the session now about to expire.
        clock.advance(by: 3_500)
        center.post(name: .authSessionPlatformDidBecomeActive, object: nil)
        #expect(handle.sessionStatus == .signedOut, "the first activation the client posts revalidates")
        #expect(provider.signOutCount == 1)
    }

    @Test("17. on Linux the default activation signal has no app lifecycle; with one, the first activation only arms")
    func defaultLifecycleByPlatform() {
        #if !canImport(UIKit) && !canImport(AppKit)
        #expect(!NotificationCenterActivationSignal().hasApplicationLifecycle)
        #endif
        let center = NotificationCenter()
        let clock = ManualClock()
        let provider = MockSessionProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let handle = mockHandle(
            provider,
            activation: NotificationCenterActivationSignal(center: center, hasApplicationLifecycle: true),
            clock: clock
        )
        provider.publish(.sessionFetched(isInitialFetch: true))
        clock.advance(by: 3_500)
        center.post(name: .authSessionPlatformDidBecomeActive, object: nil)
        #expect(handle.sessionStatus == .signedIn, "UIKit posts one at launch: the first only arms")
    }

    // MARK: 18

    @Test("18. waitForStatus matches the history; waitForNextStatus and waitForStatus(after:) only what comes next")
    func waitsForHistoryOrNext() async throws {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        harness.provider.publish(.sessionSignedOut(error: nil))
        try await harness.recorder.waitForStatus(.signedIn)  // in the history: returns at once
        await #expect(throws: MockTimeoutError.self) {
            try await harness.recorder.waitForNextStatus(.signedIn, timeout: 0.1)
        }
        let mark = harness.recorder.count
        harness.provider.publish(.sessionSignIn)
        try await harness.recorder.waitForStatus(.signedIn, after: mark)
        #expect(harness.recorder.statusChanges.filter { $0.to == .signedIn }.count == 2)
    }

    // MARK: 12 (portable counterpart)

    @Test("12. a sign-out takes the prompt down: the authenticator's prompt is cancelled, not left up")
    func signOutCancelsThePrompt() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        try await harness.authenticator.waitForPendingPrompt()
        harness.provider.publish(.sessionSignedOut(error: nil))
        #expect(harness.authenticator.pendingPromptCount == 0, "cancelled in the step that signed out")
        await harness.handle.waitForBiometricPrompt()
        #expect(!harness.handle.isBiometricAuthenticationInProcess)
        #expect(harness.handle.sessionStatus == .signedOut)
    }

    @Test("12. releasing the handle takes its prompt down through cancellation")
    func deinitCancelsThePrompt() async {
        /// The default Linux authenticator with a long prompt, reporting when it starts and ends.
        final class ObservedAuthenticator: BiometricAuthenticator {
            let inner = SimulatedBiometricAuthenticator(outcome: .success, latency: 600)
            let events: AsyncStream<String>.Continuation
            init(events: AsyncStream<String>.Continuation) {
                self.events = events
            }
            func authenticate(reason: String) async throws(BiometricAuthenticationError) {
                events.yield("up")
                do throws(BiometricAuthenticationError) {
                    try await inner.authenticate(reason: reason)
                    events.yield("succeeded")
                } catch {
                    events.yield("ended: \(error)")
                    throw error
                }
            }
        }
        let (events, continuation) = AsyncStream.makeStream(of: String.self)
        var iterator = events.makeAsyncIterator()
        do {
            let clock = ManualClock()
            let provider = MockSessionProvider(
                session: MockSession(expiresIn: 3600, from: clock.now),
                isBioMetricAuthenticationEnabled: true
            )
            let handle = mockHandle(provider, authenticator: ObservedAuthenticator(events: continuation), clock: clock)
            provider.publish(.sessionFetched(isInitialFetch: true))
            #expect(await iterator.next() == "up")
            withExtendedLifetime(handle) {}
        }
        #expect(await iterator.next() == "ended: canceledBySystem")
    }

    // MARK: Unsubscribing from callbacks

}

extension ConcurrencyLoad {

    @Suite("Joining under load (issue 8)")
    struct JoiningLoadTests {

        @Test("16. subscribers that join while inputs flow each see a chain from their starting status")
        func joiningUnderLoadKeepsTheChain() async throws {
            let harness = Harness(subscribe: false)
            let recorders = (0..<64).map { RecordingAuthSessionDelegate(label: "joining-\($0)") }
            let events: [AuthSessionEvent] = [
                .fetchingSession, .sessionSignIn, .sessionSignedOut(error: nil), .sessionFetched(isInitialFetch: false),
            ]
            await onParallelThreads(5) { thread in
                if thread == 0 {
                    for recorder in recorders {
                        harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
                    }
                } else {
                    for step in 0..<400 {
                        harness.provider.publish(events[(thread + step) % events.count])
                    }
                }
            }
            await harness.handle.waitUntilIdle()
            let final = harness.handle.sessionStatus
            for recorder in recorders {
                let start = try await recorder.waitForStartingStatus()
                await recorder.drain()
                #expect(isChain(recorder.statusChanges, from: start), "no gap, no repeat after joining")
                #expect((recorder.statusChanges.last?.to ?? start) == final)
            }
        }
    }
}

extension ConcurrencyLoad {

    @Suite("Unsubscribing from callbacks under load")
    struct CrossUnsubscribeLoadTests {

        @Test("two delegates that unsubscribe each other from their callbacks, on two queues, never deadlock")
        func crossUnsubscribeDoesNotDeadlock() async {
            final class Partner: AuthSessionDelegate {
                let handle: AuthSessionHandle<MockSessionProvider>
                let other = ConcurrencySafeContainer<Partner?>(nil)
                init(handle: AuthSessionHandle<MockSessionProvider>) {
                    self.handle = handle
                }
                func authentication(
                    _ sessionHandle: (any AuthSessionHandleProtocol)?,
                    didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
                    from oldStatus: any AuthSessionStatusProtocol,
                    for session: (any AuthSessionProtocol)?
                ) {
                    if let other = other.withLock({ $0 }) {
                        handle.unsubscribeDelegate(other)
                    }
                }
            }
            let harness = Harness(subscribe: false)
            let finished = await onParallelThreads(1, timeout: 60) { _ in
                for _ in 0..<500 {
                    let first = Partner(handle: harness.handle)
                    let second = Partner(handle: harness.handle)
                    first.other.withLock { $0 = second }
                    second.other.withLock { $0 = first }
                    let queues = (DispatchQueue(label: "partner-a"), DispatchQueue(label: "partner-b"))
                    harness.handle.subscribeDelegate(first, receive: queues.0)
                    harness.handle.subscribeDelegate(second, receive: queues.1)
                    harness.provider.publish(.sessionSignIn)
                    harness.provider.publish(.sessionSignedOut(error: nil))
                    queues.0.sync {}
                    queues.1.sync {}
                    first.other.withLock { $0 = nil }
                    second.other.withLock { $0 = nil }
                }
            }
            #expect(finished, "deadlocked")
        }
    }
}
