import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// Records the label of the queue each callback ran on.
private final class QueueRecordingDelegate: AuthSessionDelegate {
    static let key = DispatchSpecificKey<String>()
    private let labels = ConcurrencySafeContainer<[String?]>([])

    var recorded: [String?] { labels.withLock { $0 } }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        let label = DispatchQueue.getSpecific(key: Self.key)
        labels.withLock { $0.append(label) }
    }
}

private func labelledQueue(_ label: String) -> DispatchQueue {
    let queue = DispatchQueue(label: label)
    queue.setSpecific(key: QueueRecordingDelegate.key, value: label)
    return queue
}

private func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async { continuation.resume() }
    }
}

@Suite("Delegate Notifications")
struct DelegateNotificationTests {

    @Test("each delegate is called on the queue it subscribed with, never on the publishing thread")
    func callbacksRunOnSubscribedQueue() async {
        let harness = Harness(subscribe: false)
        let first = QueueRecordingDelegate()
        let second = QueueRecordingDelegate()
        let firstQueue = labelledQueue("first")
        let secondQueue = labelledQueue("second")
        harness.handle.subscribeDelegate(first, receive: firstQueue)
        harness.handle.subscribeDelegate(second, receive: secondQueue)
        harness.provider.publish(.sessionSignIn)
        await drain(firstQueue)
        await drain(secondQueue)
        #expect(first.recorded == ["first"])
        #expect(second.recorded == ["second"])
    }

    @Test("every subscriber receives every callback, in the same order")
    func fanOut() async {
        let harness = Harness(subscribe: false)
        let recorders = (0..<16).map { RecordingAuthSessionDelegate(label: "fan-out-\($0)") }
        for recorder in recorders {
            harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
        }
        harness.launch()
        harness.provider.publish(.sessionSignedOut(error: nil))
        for recorder in recorders {
            await recorder.drain()
        }
        let expected = [
            "statusChanged(syncing → validating)", "statusChanged(validating → signedIn)", "sessionFetch(initial)",
            "statusChanged(signedIn → signedOut)", "logout(nil)",
        ]
        for recorder in recorders {
            #expect(recorder.events.map(\.description) == expected)
        }
    }

    @Test("subscribers are held weakly, and a deallocated one is pruned")
    func subscribersAreWeak() async {
        let harness = Harness(subscribe: false)
        weak var weakDelegate: RecordingAuthSessionDelegate?
        let queue = DispatchQueue(label: "weak")
        do {
            let delegate = RecordingAuthSessionDelegate()
            weakDelegate = delegate
            harness.handle.subscribeDelegate(delegate, receive: queue)
            #expect(harness.handle.subscriberCount == 1)
        }
        // A delivery in progress (the status told on subscribing) holds its subscriber for the
        // length of the callback; once the queue has run it, nothing does.
        await drain(queue)
        #expect(weakDelegate == nil)
        harness.provider.publish(.sessionSignIn)
        await drain(queue)
        #expect(harness.handle.subscriberCount == 0)
    }

    @Test("a delivery whose delegate died is dropped and the subscription removed")
    func deadDeliveryPrunes() async {
        let harness = Harness(subscribe: false)
        let queue = DispatchQueue(label: "dead-delivery")
        queue.suspend()
        do {
            let delegate = RecordingAuthSessionDelegate()
            harness.handle.subscribeDelegate(delegate, receive: queue)
            harness.provider.publish(.sessionSignIn)
        }
        queue.resume()
        await drain(queue)
        #expect(harness.handle.state.withLock { $0.subscribers.entries.count } == 0)
    }

    @Test("subscribing twice counts once")
    func subscribingTwiceCountsOnce() async {
        let harness = Harness(subscribe: false)
        let recorder = RecordingAuthSessionDelegate()
        harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
        harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
        #expect(harness.handle.subscriberCount == 1)
        harness.provider.publish(.sessionSignIn)
        await recorder.drain()
        #expect(recorder.events.map(\.description) == ["statusChanged(syncing → signedIn)", "login"])
    }

    @Test("subscribing again moves the delegate to the new queue")
    func resubscribeMovesQueue() async {
        let harness = Harness(subscribe: false)
        let delegate = QueueRecordingDelegate()
        let oldQueue = labelledQueue("old")
        let newQueue = labelledQueue("new")
        harness.handle.subscribeDelegate(delegate, receive: oldQueue)
        harness.handle.subscribeDelegate(delegate, receive: newQueue)
        harness.provider.publish(.sessionSignIn)
        await drain(oldQueue)
        await drain(newQueue)
        #expect(delegate.recorded == ["new"])
    }

    @Test("unsubscribing stops delivery, including callbacks already enqueued")
    func unsubscribeStopsDelivery() async {
        let harness = Harness(subscribe: false)
        let recorder = RecordingAuthSessionDelegate()
        harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
        recorder.queue.suspend()
        harness.provider.publish(.sessionSignIn)
        harness.handle.unsubscribeDelegate(recorder)
        harness.provider.publish(.sessionSignedOut(error: nil))
        recorder.queue.resume()
        await recorder.drain()
        #expect(recorder.events.isEmpty)
        #expect(harness.handle.subscriberCount == 0)
    }

    @Test("unsubscribing a delegate that never subscribed does nothing")
    func unsubscribeUnknown() {
        let harness = Harness()
        harness.handle.unsubscribeDelegate(RecordingAuthSessionDelegate())
        #expect(harness.handle.subscriberCount == 1)
    }

    @Test("a delegate may unsubscribe itself, or subscribe another, from inside a callback")
    func reentrantSubscriptionChanges() async throws {
        final class SelfRemovingDelegate: AuthSessionDelegate {
            let calls = ConcurrencySafeContainer(0)
            let handle: AuthSessionHandle<MockSessionProvider>
            let newcomer: RecordingAuthSessionDelegate

            init(handle: AuthSessionHandle<MockSessionProvider>, newcomer: RecordingAuthSessionDelegate) {
                self.handle = handle
                self.newcomer = newcomer
            }

            func authentication(
                _ sessionHandle: (any AuthSessionHandleProtocol)?,
                didLoginWith user: (any AuthSessionUserProtocol)?,
                for session: (any AuthSessionProtocol)?
            ) {
                calls.withLock { $0 += 1 }
                handle.unsubscribeDelegate(self)
                handle.subscribeDelegate(newcomer, receive: newcomer.queue)
            }
        }
        let harness = Harness(subscribe: false)
        let newcomer = RecordingAuthSessionDelegate()
        let delegate = SelfRemovingDelegate(handle: harness.handle, newcomer: newcomer)
        let queue = DispatchQueue(label: "self-removing")
        harness.handle.subscribeDelegate(delegate, receive: queue)
        harness.provider.publish(.sessionSignIn)
        await drain(queue)
        harness.provider.publish(.sessionSignIn)
        await drain(queue)
        #expect(delegate.calls.withLock { $0 } == 1)
        try await newcomer.waitForEvents(count: 1)
        #expect(newcomer.events.map(\.description) == ["login"])
    }

    @Test("a delegate that reads the handle from its callback does not deadlock")
    func reentrantRead() async {
        final class ReadingDelegate: AuthSessionDelegate {
            let seen = ConcurrencySafeContainer<[AuthSessionStatus]>([])
            let handle: AuthSessionHandle<MockSessionProvider>

            init(handle: AuthSessionHandle<MockSessionProvider>) {
                self.handle = handle
            }

            func authentication(
                _ sessionHandle: (any AuthSessionHandleProtocol)?,
                didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
                from oldStatus: any AuthSessionStatusProtocol,
                for session: (any AuthSessionProtocol)?
            ) {
                let status = handle.sessionStatus
                seen.withLock { $0.append(status) }
            }
        }
        let harness = Harness(subscribe: false)
        let delegate = ReadingDelegate(handle: harness.handle)
        let queue = DispatchQueue(label: "reading")
        harness.handle.subscribeDelegate(delegate, receive: queue)
        harness.provider.publish(.sessionSignIn)
        await drain(queue)
        #expect(delegate.seen.withLock { $0 } == [.signedIn])
    }

    @Test("callbacks carry the handle, or nil once it is gone")
    func callbacksCarryHandle() async {
        let recorder = RecordingAuthSessionDelegate()
        recorder.queue.suspend()
        do {
            let harness = Harness(subscribe: false)
            harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
            harness.provider.publish(.sessionSignIn)
        }
        recorder.queue.resume()
        await recorder.drain()
        #expect(recorder.records.count == 2)
        #expect(recorder.records.allSatisfy { !$0.hadHandle })

        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        await harness.recorder.drain()
        #expect(harness.recorder.records.allSatisfy { $0.hadHandle })
    }
}

@Suite("Event proxies")
struct EventProxyTests {

    @Test("SessionHandleEventProxy forwards every event synchronously, with or without a provider")
    func handleProxyForwards() {
        let received = ConcurrencySafeContainer<[String]>([])
        let proxy = SessionHandleEventProxy { event in received.withLock { $0.append(event.description) } }
        proxy.publish(.fetchingSession)
        proxy.publish(.sessionSignIn, for: MockSessionProvider())
        proxy.publish(.sessionFetched(isInitialFetch: true))
        #expect(received.withLock { $0 } == ["fetchingSession", "sessionSignIn", "sessionFetched(initial)"])
    }

    @Test("a handle's proxy does not keep the handle alive and ignores events once it is gone")
    func handleProxyIsWeak() async {
        let provider = MockSessionProvider(session: MockSession(expiresIn: 3600, from: ManualClock.defaultStart))
        let recorder = RecordingAuthSessionDelegate()
        var proxy: SessionHandleEventProxy?
        weak var weakHandle: AuthSessionHandle<MockSessionProvider>?
        do {
            let handle = mockHandle(provider)
            handle.subscribeDelegate(recorder, receive: recorder.queue)
            weakHandle = handle
            proxy = handle.sessionEventProxy
        }
        // The first callback (the status on joining) runs on the recorder's queue and holds the
        // handle while it runs: wait for it, then only the proxy could keep the handle alive.
        await recorder.drain()
        #expect(weakHandle == nil)
        proxy?.publish(.sessionSignIn)
        proxy?.publish(.sessionFetched(isInitialFetch: true))
        await recorder.drain()
        #expect(recorder.events.isEmpty, "nothing reaches observers of a handle that is gone")
        #expect(provider.signOutCount == 0)
    }

    @Test("SessionDelegateEventProxy delivers each event on the main actor, in order")
    func delegateProxyOnMainActorInOrder() async {
        let received = ConcurrencySafeContainer<[String]>([])
        let done = ConcurrencySafeContainer<CheckedContinuation<Void, Never>?>(nil)
        let proxy = SessionDelegateEventProxy { event in
            dispatchPrecondition(condition: .onQueue(.main))
            let count = received.withLock {
                $0.append(event.description)
                return $0.count
            }
            if count == 100 {
                done.withLock { $0 }?.resume()
            }
        }
        await withCheckedContinuation { continuation in
            done.withLock { $0 = continuation }
            for index in 0..<100 {
                proxy.publish(.sessionFetch(isInitial: index.isMultiple(of: 2)), for: nil)
            }
        }
        let expected = (0..<100).map { "sessionFetch(\($0.isMultiple(of: 2) ? "initial" : "refresh"))" }
        #expect(received.withLock { $0 } == expected)
    }

    @Test("a subscribed event publisher sees exactly what delegates see, with the handle")
    func publisherSeesDelegateEvents() async {
        let harness = Harness()
        let publisher = RecordingPublisher()
        harness.handle.subscribeEventPublisher(publisher, receive: publisher.queue)
        harness.launch()
        harness.provider.publish(.sessionUpdated(nil))
        harness.provider.publish(.unexpectedError(.sessionMalformed))
        #expect(await publisher.events() == (await harness.events()))
        #expect(publisher.allHadHandle)
    }

    @Test("an unsubscribed publisher receives nothing more; publishers are held weakly")
    func publisherUnsubscribeAndWeak() async {
        let harness = Harness(subscribe: false)
        let publisher = RecordingPublisher()
        harness.handle.subscribeEventPublisher(publisher, receive: publisher.queue)
        harness.provider.publish(.sessionSignIn)
        #expect(await publisher.events() == ["statusChanged(syncing → signedIn)", "login"])
        harness.handle.unsubscribeEventPublisher(publisher)
        harness.provider.publish(.sessionSignedOut(error: nil))
        #expect(await publisher.events() == ["statusChanged(syncing → signedIn)", "login"])

        do {
            let transient = RecordingPublisher()
            harness.handle.subscribeEventPublisher(transient, receive: transient.queue)
            #expect(harness.handle.subscriberCount == 1)
        }
        #expect(harness.handle.subscriberCount == 0)
    }

    @Test("a SessionDelegateEventProxy subscribed to a handle hears the lifecycle on the main actor")
    func delegateProxyOnHandle() async throws {
        let harness = Harness()
        let received = ConcurrencySafeContainer<[String]>([])
        let stream = AsyncStream<Void>.makeStream()
        let proxy = SessionDelegateEventProxy { event in
            received.withLock { $0.append(event.description) }
            stream.continuation.yield()
        }
        harness.handle.subscribeEventPublisher(proxy)
        harness.launch()
        var iterator = stream.stream.makeAsyncIterator()
        for _ in 0..<3 {
            await iterator.next()
        }
        #expect(received.withLock { $0 } == (await harness.events()))
    }
}

@Suite("AuthSessionDelegateEvent and the outbound contract")
struct DelegateEventContractTests {

    /// A publisher written against the contract alone, as an app might.
    final class CollectingPublisher: AuthSessionDelegateEventPublisher {
        let published = ConcurrencySafeContainer<[(event: String, handle: ObjectIdentifier?)]>([])

        func publish(_ event: AuthSessionDelegateEvent, for sessionHandle: (any AuthSessionHandleProtocol)?) {
            published.withLock { $0.append((event.description, sessionHandle.map { ObjectIdentifier($0) })) }
        }
    }

    /// A closure-only proxy written against the contract alone.
    final class ClosureProxy: AuthSessionDelegateEventProxy {
        let eventListening: @MainActor @Sendable (AuthSessionDelegateEvent) -> Void

        init(eventListening: @escaping @MainActor @Sendable (AuthSessionDelegateEvent) -> Void) {
            self.eventListening = eventListening
        }
    }

    @Test("publish(_:for:) keeps order and passes the handle through")
    func publisherContract() {
        let publisher = CollectingPublisher()
        let harness = Harness()
        publisher.publish(.sessionFetch(isInitial: true), for: nil)
        publisher.publish(.login, for: harness.handle)
        publisher.publish(.logout(error: nil), for: nil)
        let published = publisher.published.withLock { $0 }
        #expect(published.map(\.event) == ["sessionFetch(initial)", "login", "logout(nil)"])
        #expect(published[1].handle == ObjectIdentifier(harness.handle))
        #expect(published[0].handle == nil)
    }

    @Test("a proxy type can be created through the protocol's init(eventListening:)")
    @MainActor
    func proxyInitThroughMetatype() {
        let received = ConcurrencySafeContainer<[String]>([])
        let type: any AuthSessionDelegateEventProxy.Type = ClosureProxy.self
        let proxy = type.init { event in received.withLock { $0.append(event.description) } }
        (proxy as? ClosureProxy)?.eventListening(.userUpdate)
        (proxy as? ClosureProxy)?.eventListening(.failure(error: .sessionMalformed))
        #expect(
            received.withLock { $0 } == [
                "userUpdate", "failure(AuthSessionError.sessionMalformed: The authentication session is malformed.)",
            ]
        )
    }

    @Test("every case describes itself without a token")
    func descriptions() {
        let cause = NSError(domain: "d", code: 1, userInfo: [NSLocalizedDescriptionKey: "token=s3cr3t rejected"])
        let events: [AuthSessionDelegateEvent] = [
            .sessionFetch(isInitial: false), .login, .logout(error: cause),
            .sessionStatusChanged(oldValue: AuthSessionStatus.syncing, newValue: AuthSessionStatus.signedIn),
            .failure(error: .networkFailure(error: cause)), .userUpdate,
        ]
        let descriptions = events.map(\.description)
        #expect(descriptions[0] == "sessionFetch(refresh)")
        #expect(descriptions[3] == "statusChanged(syncing → signedIn)")
        for description in descriptions {
            #expect(!description.contains("s3cr3t"))
        }
        let sessionEvent = AuthSessionEvent.sessionUpdated(MockSession(expiresIn: 10, accessToken: "s3cr3t"))
        #expect(sessionEvent.description == "sessionUpdated(session)")
        #expect(!"\(MockSession(expiresIn: 10, accessToken: "s3cr3t"))".contains("s3cr3t"))
    }
}
