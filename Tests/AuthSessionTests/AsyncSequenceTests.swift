import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// Collects a sequence's elements until it has `count` of them, or it finishes.
private func collect<Element: Sendable>(_ sequence: AsyncStream<Element>, count: Int) async -> [Element] {
    var elements: [Element] = []
    for await element in sequence {
        elements.append(element)
        if elements.count == count {
            break
        }
    }
    return elements
}

@Suite("Async sequences")
struct AsyncSequenceTests {

    @Test("statusUpdates starts with the current status, then every change in order")
    func statusUpdatesStartWithCurrent() async {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        let updates = harness.handle.statusUpdates()
        harness.provider.publish(.fetchingSession)
        harness.provider.publish(.sessionFetched(isInitialFetch: false))
        harness.provider.publish(.sessionSignedOut(error: nil))
        #expect(await collect(updates, count: 4) == [.signedIn, .syncing, .signedIn, .signedOut])
    }

    @Test("8 consumers iterating during a concurrent input storm each receive exactly the same gap-free chain")
    func concurrentConsumersSeeOneChain() async {
        let recorder = RecordingAuthSessionDelegate()
        var consumers: [Task<[AuthSessionStatus], Never>] = []
        do {
            let harness = Harness(expiresIn: 3600, subscribe: false)
            harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
            for _ in 0..<8 {
                let updates = harness.handle.statusUpdates()
                consumers.append(
                    Task {
                        var statuses: [AuthSessionStatus] = []
                        for await status in updates {
                            statuses.append(status)
                        }
                        return statuses
                    }
                )
            }
            let events: [AuthSessionEvent] = [
                .fetchingSession, .sessionSignIn, .sessionSignedOut(error: nil), .sessionFetched(isInitialFetch: false),
            ]
            await onParallelThreads(8) { thread in
                for step in 0..<500 {
                    harness.provider.publish(events[(thread * 3 + step) % events.count])
                }
            }
            await harness.handle.waitUntilIdle()
        }
        // The handle is gone: every sequence has finished, so each is complete.
        await recorder.drain()
        let chain = [AuthSessionStatus.syncing] + recorder.statusChanges.map(\.to)
        #expect(chain.count > 100)
        for consumer in consumers {
            let statuses = await consumer.value
            #expect(statuses == chain)
            #expect(zip(statuses, statuses.dropFirst()).allSatisfy { $0 != $1 }, "no repeats")
        }
    }

    @Test("delegateEvents carries what delegates see, in the same order")
    func delegateEventsMatchDelegates() async {
        let harness = Harness()
        let events = harness.handle.delegateEvents()
        harness.launch()
        harness.provider.publish(.sessionUpdated(nil))
        harness.provider.publish(.sessionSignedOut(error: nil))
        let delegateView = await harness.events()
        let streamed = await collect(events, count: delegateView.count)
        #expect(streamed.map(\.description) == delegateView)
    }

    @Test("a cancelled consumer is removed from the handle")
    func cancelledConsumerIsRemoved() async throws {
        let harness = Harness()
        let started = AsyncStream<Void>.makeStream()
        let consumer = Task {
            var count = 0
            for await _ in harness.handle.statusUpdates() {
                count += 1
                started.continuation.yield()
            }
            return count
        }
        var signal = started.stream.makeAsyncIterator()
        await signal.next()
        #expect(harness.handle.streamConsumerCount == 1)
        consumer.cancel()
        #expect(await consumer.value == 1)
        #expect(harness.handle.streamConsumerCount == 0)
    }

    @Test("a consumer that stops iterating is removed")
    func abandonedConsumerIsRemoved() async {
        let harness = Harness()
        do {
            let updates = harness.handle.statusUpdates()
            #expect(await collect(updates, count: 1) == [.syncing])
            withExtendedLifetime(updates) {
                #expect(harness.handle.streamConsumerCount == 1)
            }
        }
        #expect(harness.handle.streamConsumerCount == 0)
    }

    @Test("both sequences finish when the handle is deallocated")
    func sequencesFinishWithHandle() async {
        var statuses: AsyncStream<AuthSessionStatus>?
        var events: AsyncStream<AuthSessionDelegateEvent>?
        do {
            let harness = Harness()
            statuses = harness.handle.statusUpdates()
            events = harness.handle.delegateEvents()
            harness.provider.publish(.sessionSignIn)
        }
        var receivedStatuses: [AuthSessionStatus] = []
        for await status in statuses! {
            receivedStatuses.append(status)
        }
        var receivedEvents: [String] = []
        for await event in events! {
            receivedEvents.append(event.description)
        }
        #expect(receivedStatuses == [.syncing, .signedIn])
        #expect(receivedEvents == ["statusChanged(syncing → signedIn)", "login"])
    }

    @Test("firstStatus returns the current status when it already matches")
    func firstStatusMatchesNow() async throws {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        #expect(try await harness.handle.firstStatus { !$0.isLoadingStatus } == .signedIn)
    }

    @Test("firstStatus waits for a matching change")
    func firstStatusWaits() async throws {
        let harness = Harness(biometric: true)
        harness.launch()
        let settled = Task { try await harness.handle.firstStatus { !$0.isLoadingStatus } }
        try await harness.authenticator.resolveNextPrompt(with: .success)
        #expect(try await settled.value == .signedIn)
    }

    @Test("firstStatus is cancellable")
    func firstStatusCancels() async {
        let harness = Harness()
        let waiting = Task { try await harness.handle.firstStatus { $0 == .signedOut } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(harness.handle.streamConsumerCount == 0)
    }
}
