import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// What unsubscribing promises: once it returns, nothing more reaches the observer, and an
/// observer may come and go from inside its own callbacks or its `deinit`.
@Suite("Unsubscribing")
struct HandleUnsubscribeTests {

    @Test("a delegate that unsubscribes in its first callback gets none of the step's other callbacks")
    func unsubscribeMidStep() async {
        final class OneShotDelegate: AuthSessionDelegate {
            let handle: AuthSessionHandle<MockSessionProvider>
            let received = ConcurrencySafeContainer<[String]>([])
            init(handle: AuthSessionHandle<MockSessionProvider>) {
                self.handle = handle
            }
            func authentication(
                _ sessionHandle: (any AuthSessionHandleProtocol)?,
                didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
                from oldStatus: any AuthSessionStatusProtocol,
                for session: (any AuthSessionProtocol)?
            ) {
                received.withLock { $0.append("status") }
                handle.unsubscribeDelegate(self)
            }
            func authentication(
                _ sessionHandle: (any AuthSessionHandleProtocol)?,
                didCompleteFetchWith session: (any AuthSessionProtocol)?,
                isInitialFetch: Bool
            ) {
                received.withLock { $0.append("fetch") }
            }
        }
        let harness = Harness()
        let delegate = OneShotDelegate(handle: harness.handle)
        let queue = DispatchQueue(label: "one-shot")
        harness.handle.subscribeDelegate(delegate, receive: queue)
        harness.launch()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(delegate.received.withLock { $0 } == ["status"])
        #expect(await harness.events().count == 3, "other subscribers still get all three")
    }

    @Test("a new delegate at a released delegate's address replaces the stale entry instead of being mistaken for it")
    func reusedAddressSubscribes() {
        let queue = DispatchQueue(label: "reused-address")
        let newcomer = RecordingAuthSessionDelegate()
        let id = Subscription.ID(object: ObjectIdentifier(newcomer), kind: .delegate)
        var registry = SubscriberRegistry()
        do {
            // The entry a released delegate left at the address the newcomer now occupies.
            let released = RecordingAuthSessionDelegate()
            registry.subscribe(Subscription(delegate: released, id: id), of: released, queue: queue)
        }
        #expect(registry.entries.count == 1)
        #expect(registry.entries[0].subscription.isAlive == false)

        let subscription = Subscription(delegate: newcomer)
        registry.subscribe(subscription, of: newcomer, queue: queue)
        #expect(registry.entries.count == 1)
        #expect(registry.entries[0].subscription === subscription)
        #expect(registry.entries[0].subscription.refers(to: newcomer))

        // Subscribing the same live delegate again keeps its subscription.
        registry.subscribe(Subscription(delegate: newcomer), of: newcomer, queue: queue)
        #expect(registry.entries[0].subscription === subscription)
    }

    @Test("after unsubscribeEventPublisher returns, the private listener's closure is not called")
    @MainActor
    func privateListenerStopsAtUnsubscribe() async {
        let harness = Harness(subscribe: false)
        let log = ConcurrencySafeContainer<[String]>([])
        let listener = SessionDelegateEventProxy { event in
            log.withLock { $0.append("\(event)") }
        }
        harness.handle.subscribeEventPublisher(listener)
        harness.provider.publish(.sessionSignIn)
        // Runs on the main queue after the handle's delivery and before anything that delivery
        // enqueues itself.
        DispatchQueue.main.async {
            harness.handle.unsubscribeEventPublisher(listener)
            log.withLock { $0.append("unsubscribed") }
        }
        await drainMainQueue(times: 3)
        let entries = log.withLock { $0 }
        let afterUnsubscribe = entries.drop { $0 != "unsubscribed" }.dropFirst()
        #expect(afterUnsubscribe.isEmpty, "called after unsubscribing: \(Array(afterUnsubscribe))")
    }
}

@Suite("Subscribing scales linearly")
struct SubscriptionScalingTests {

    private final class SilentDelegate: AuthSessionDelegate {}

    @Test("subscribing and unsubscribing n delegates looks at O(n) entries in all, not O(n²)")
    func subscribingIsLinear() {
        let harness = Harness(subscribe: false)
        let count = 4_000
        let delegates = (0..<count).map { _ in SilentDelegate() }
        for delegate in delegates {
            harness.handle.subscribeDelegate(delegate, receive: .global())
        }
        for delegate in delegates {
            harness.handle.subscribeDelegate(delegate, receive: .global())  // again: moves, keeps one
        }
        #expect(harness.handle.subscriberCount == count)
        for delegate in delegates {
            harness.handle.unsubscribeDelegate(delegate)
        }
        #expect(harness.handle.subscriberCount == 0)
        let probes = harness.handle.state.withLock { $0.subscribers.probeCount }
        #expect(probes <= 16 * count, "\(probes) entries probed for \(count) delegates")
    }
}

extension ConcurrencyLoad {

    @Suite("Unsubscribing from another thread under load")
    struct UnsubscribeLoadTests {

        @Test("once unsubscribeDelegate returns on another thread, the delegate is never called again")
        func unsubscribeExcludesDelivery() async {
            let trials = 3_000
            let violations = ConcurrencySafeContainer(0)
            let harness = Harness(subscribe: false)
            let queue = DispatchQueue(label: "unsubscribe-exclusion")
            let threads = ParallelThreads(2)
            defer { threads.stop() }
            for _ in 0..<trials {
                let delegate = FlagCheckingDelegate(violations: violations)
                harness.handle.subscribeDelegate(delegate, receive: queue)
                await threads.run { thread in
                    if thread == 0 {
                        harness.provider.publish(.sessionSignIn)
                        harness.provider.publish(.sessionSignedOut(error: nil))
                    } else {
                        harness.handle.unsubscribeDelegate(delegate)
                        delegate.unsubscribed.withLock { $0 = true }
                    }
                }
            }
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            let count = violations.withLock { $0 }
            #expect(count == 0, "a delegate ran after unsubscribeDelegate returned in \(count) callbacks")
        }
    }
}

extension ConcurrencyLoad {

    @Suite("Deinit unsubscribing under load")
    struct DeinitUnsubscribeLoadTests {

        @Test("a delegate whose deinit unsubscribes itself never deadlocks the handle")
        func delegateDeinitUnsubscribes() async {
            final class SelfUnsubscribingDelegate: AuthSessionDelegate {
                let handle: AuthSessionHandle<MockSessionProvider>
                init(handle: AuthSessionHandle<MockSessionProvider>) {
                    self.handle = handle
                }
                deinit {
                    handle.unsubscribeDelegate(self)
                }
            }
            let harness = Harness(subscribe: false)
            let queue = DispatchQueue(label: "deinit-unsubscribes")
            let finished = await onParallelThreads(8, timeout: 60) { thread in
                for step in 0..<10_000 {
                    let delegate = SelfUnsubscribingDelegate(handle: harness.handle)
                    harness.handle.subscribeDelegate(delegate, receive: queue)
                    if step.isMultiple(of: 50) {
                        harness.provider.publish(
                            thread.isMultiple(of: 2) ? .sessionSignIn : .sessionSignedOut(error: nil)
                        )
                    }
                }
            }
            guard finished else {
                Issue.record("the handle deadlocked")
                return
            }
            #expect(harness.handle.subscriberCount == 0)
        }
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

/// A delegate that counts the callbacks that start after its `unsubscribed` flag was set, or are
/// still running when it is set.
private final class FlagCheckingDelegate: AuthSessionDelegate {
    let unsubscribed = ConcurrencySafeContainer(false)
    let violations: ConcurrencySafeContainer<Int>

    init(violations: ConcurrencySafeContainer<Int>) {
        self.violations = violations
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        check()
    }

    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {
        check()
    }

    private func check() {
        if unsubscribed.withLock({ $0 }) {
            violations.withLock { $0 += 1 }
            return
        }
        // A callback that takes a moment, as real ones do: an unsubscribe meanwhile must wait.
        for _ in 0..<200 {
            if unsubscribed.withLock({ $0 }) {
                violations.withLock { $0 += 1 }
                return
            }
        }
    }
}
