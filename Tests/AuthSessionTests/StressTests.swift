import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// The spec's stress loads and more, each asserting outcomes, not just survival. Serialized, so
/// the loads do not run against each other (other suites may still run alongside); run under
/// ThreadSanitizer by `.ci/run`. Work runs on threads of its own, never on the cooperative pool.
/// The tests that load every core: run one at a time, so that none of them starves another (or
/// a test elsewhere whose safety net is in real time) of the machine's two cores.
@Suite("Concurrency load", .serialized)
enum ConcurrencyLoad {}

extension ConcurrencyLoad {
    @Suite("Stress")
    struct StressTests {

        // MARK: - Helpers

        /// How many callbacks of each kind `events` holds.
        private struct Tally: Equatable {
            var logins = 0
            var logouts = 0
            var fetches = 0
            var userUpdates = 0
            var failures = 0
            var statusChanges = 0

            init(callbacks: [AuthSessionDelegateEvent]) {
                for event in callbacks {
                    switch event {
                    case .login: logins += 1
                    case .logout: logouts += 1
                    case .sessionFetch: fetches += 1
                    case .userUpdate: userUpdates += 1
                    case .failure: failures += 1
                    case .sessionStatusChanged: statusChanges += 1
                    }
                }
            }

            init(published events: [AuthSessionEvent]) {
                for event in events {
                    switch event {
                    case .sessionSignIn: logins += 1
                    case .sessionSignedOut: logouts += 1
                    case .sessionFetched: fetches += 1
                    case .sessionUpdated: userUpdates += 1
                    case .sessionFetchFailed, .unexpectedError: failures += 1
                    case .fetchingSession: break
                    }
                }
            }
        }

        /// Ends every prompt on screen or still to come, and waits for the handle to apply them all.
        private func settlePrompts(_ harness: Harness) async {
            harness.provider.isBioMetricAuthenticationEnabled = false
            harness.authenticator.automaticOutcome = .success
            await harness.handle.waitUntilIdle()
            while harness.authenticator.resolvePendingPrompt(with: .success) {}
            await harness.handle.waitForBiometricPrompt()
            await harness.handle.waitUntilIdle()
        }

        /// Every recorder saw the same callbacks; the status changes form one chain from `.syncing`
        /// ending at the handle's status; the settled state obeys the invariants.
        private func expectConsistent(_ harness: Harness, _ recorders: [RecordingAuthSessionDelegate]) async {
            for recorder in recorders {
                await recorder.drain()
            }
            let reference = recorders[0].events.map(\.description)
            for recorder in recorders.dropFirst() {
                #expect(recorder.events.map(\.description) == reference)
            }
            let changes = recorders[0].statusChanges
            let status = harness.handle.sessionStatus
            #expect(isChain(changes, from: .syncing))
            #expect((changes.last?.to ?? .syncing) == status)
            #expect(status != .validating)
            if status == .signedOut {
                #expect(!harness.handle.isManualAuthenticationRequired)
            }
            #expect(!harness.handle.isBiometricAuthenticationInProcess)
            #expect(status != .biometricAuthentication)
            // Each prompt presented was decided by a step that made the status enter
            // biometricAuthentication (one presented in place of an abandoned one included).
            #expect(harness.authenticator.promptCount <= changes.filter { $0.to == .biometricAuthentication }.count)
        }

        // MARK: - Loads

        @Test("64,000-operation burst from 32 parallel writers: exact callback counts, one chain")
        func burstFrom32Writers() async {
            let harness = Harness(expiresIn: 3600)
            let events: [AuthSessionEvent] = [
                .sessionSignIn, .fetchingSession, .sessionSignedOut(error: nil), .sessionFetched(isInitialFetch: false),
                .sessionUpdated(nil), .unexpectedError(.sessionMalformed),
            ]
            await onParallelThreads(32) { writer in
                for step in 0..<2_000 {
                    harness.provider.publish(events[(writer + step) % events.count])
                }
            }
            await harness.handle.waitUntilIdle()
            await harness.recorder.drain()
            let published = harness.provider.publishedEvents
            #expect(published.count == 64_000)
            var expected = Tally(published: published)
            expected.statusChanges = harness.recorder.statusChanges.count
            #expect(Tally(callbacks: harness.recorder.events) == expected)
            await expectConsistent(harness, [harness.recorder])
        }

        @Test("50,000-operation chaos on every surface with delegate fan-out: all subscribers agree")
        func chaos() async {
            let harness = Harness(expiresIn: 3600, biometric: true)
            let recorders = [harness.recorder] + (0..<7).map { RecordingAuthSessionDelegate(label: "chaos-\($0)") }
            for recorder in recorders.dropFirst() {
                harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
            }
            let events: [AuthSessionEvent] = [
                .fetchingSession, .sessionFetched(isInitialFetch: true), .sessionFetched(isInitialFetch: false),
                .sessionFetchFailed(URLError(.timedOut)), .sessionSignIn, .sessionSignedOut(error: nil),
                .sessionUpdated(nil),
                .unexpectedError(.sessionExpired),
            ]
            let clock = harness.clock
            await onParallelThreads(16) { thread in
                var random = SeededRandomNumberGenerator(seed: UInt64(thread))
                for _ in 0..<(50_000 / 16) {
                    switch Int.random(in: 0..<14, using: &random) {
                    case 0, 1: harness.provider.publish(events.randomElement(using: &random)!)
                    case 2: _ = harness.handle.sessionStatus
                    case 3: harness.activation.fire()
                    case 4: harness.handle.requestManualAuthentication()
                    case 5: _ = harness.handle.isManualAuthenticationRequired
                    case 6: harness.handle.setBioMetricAuthentication(Bool.random(using: &random))
                    case 7: _ = harness.handle.isBiometricAuthenticationInProcess
                    case 8: harness.authenticator.resolvePendingPrompt(with: .success)
                    case 9:
                        let error = BiometricAuthenticationError.allCases.randomElement(using: &random)!
                        harness.authenticator.resolvePendingPrompt(with: .failure(error))
                    case 10:
                        let seconds = ([nil, 60, 150, 3600] as [TimeInterval?]).randomElement(using: &random)!
                        harness.provider.session = seconds.map { MockSession(expiresIn: $0, from: clock.now) }
                    case 11: harness.provider.allowsLocalSessionValidation.toggle()
                    case 12:
                        harness.provider.biometricErrorsThatKeepSession =
                            Bool.random(using: &random) ? [] : [.canceledByUser, .failed]
                    default: _ = harness.handle.session?.accessToken
                    }
                }
            }
            await settlePrompts(harness)
            await expectConsistent(harness, recorders)
            let published = Tally(published: harness.provider.publishedEvents)
            let received = Tally(callbacks: harness.recorder.events)
            #expect(received.logins == published.logins)
            #expect(received.logouts == published.logouts)
            #expect(received.fetches == published.fetches)
            #expect(received.userUpdates == published.userUpdates)
            let biometricFailures = harness.recorder.events.filter {
                if case .failure(.biometricAuthFailure) = $0 { return true }
                return false
            }
            #expect(received.failures == published.failures + biometricFailures.count)
        }

        @Test("30,000-operation mixed accessor/mutator fan: readers never see a torn or transient state")
        func mixedAccessorsAndMutators() async {
            let harness = Harness(expiresIn: 3600)
            let sawValidating = ConcurrencySafeContainer(false)
            await onParallelThreads(16) { thread in
                for step in 0..<(30_000 / 16) {
                    let index = thread * (30_000 / 16) + step
                    switch index % 8 {
                    case 0: harness.provider.publish(.sessionSignIn)
                    case 1: harness.provider.publish(.sessionSignedOut(error: nil))
                    case 2: harness.provider.publish(.sessionFetched(isInitialFetch: index % 16 == 2))
                    case 3: harness.activation.fire()
                    case 4: harness.handle.requestManualAuthentication()
                    case 5:
                        if harness.handle.sessionStatus == .validating {
                            sawValidating.withLock { $0 = true }
                        }
                    case 6: _ = harness.handle.isManualAuthenticationRequired
                    default: _ = harness.handle.isBiometricAuthenticationInProcess
                    }
                }
            }
            await harness.handle.waitUntilIdle()
            #expect(
                sawValidating.withLock { $0 } == false,
                "validating is transient: no reader may find the handle in it"
            )
            await expectConsistent(harness, [harness.recorder])
            let published = Tally(published: harness.provider.publishedEvents)
            let received = Tally(callbacks: harness.recorder.events)
            #expect(
                received.logins == published.logins && received.logouts == published.logouts
                    && received.fetches == published.fetches
            )
        }

        @Test("10,000-operation subscribe/unsubscribe storm against 32 delegates, with events flowing")
        func subscribeUnsubscribeStorm() async {
            let harness = Harness(expiresIn: 3600)
            let pool = (0..<32).map { RecordingAuthSessionDelegate(label: "storm-\($0)") }
            let publishing = ConcurrencySafeContainer(true)
            async let storm: Void = onParallelThreads(8) { thread in
                for step in 0..<(10_000 / 8) {
                    let delegate = pool[(thread * 7 + step) % pool.count]
                    if step.isMultiple(of: 2) {
                        harness.handle.subscribeDelegate(delegate, receive: delegate.queue)
                    } else {
                        harness.handle.unsubscribeDelegate(delegate)
                    }
                }
            }
            async let traffic: Void = onParallelThreads(2) { thread in
                var step = 0
                while publishing.withLock({ $0 }) && step < 5_000 {
                    harness.provider.publish(thread == 0 ? .sessionSignIn : .sessionSignedOut(error: nil))
                    step += 1
                }
            }
            await storm
            publishing.withLock { $0 = false }
            await traffic
            await harness.handle.waitUntilIdle()

            #expect(harness.handle.subscriberCount <= pool.count + 1, "no delegate is subscribed twice")
            await harness.recorder.drain()
            let reference = harness.recorder.statusChanges
            for delegate in pool {
                await delegate.drain()
                #expect(
                    isSubsequence(delegate.statusChanges, of: reference),
                    "deliveries kept their order across resubscriptions"
                )
            }

            for delegate in pool {
                harness.handle.unsubscribeDelegate(delegate)
                delegate.reset()
            }
            for delegate in pool.enumerated() where delegate.offset.isMultiple(of: 2) {
                harness.handle.subscribeDelegate(delegate.element, receive: delegate.element.queue)
            }
            #expect(harness.handle.subscriberCount == 17)
            harness.provider.publish(.sessionUpdated(nil))
            for (index, delegate) in pool.enumerated() {
                await delegate.drain()
                #expect(delegate.events.map(\.description) == (index.isMultiple(of: 2) ? ["userUpdate"] : []))
            }
        }

        @Test("500 concurrent handle constructions and releases: every handle and provider deallocates")
        func concurrentConstructionAndRelease() async {
            let activation = ManualActivationSignal()
            let weakHandles = ConcurrencySafeContainer<[WeakBox]>([])
            let weakProviders = ConcurrencySafeContainer<[WeakBox]>([])
            let statuses = ConcurrencySafeContainer<[AuthSessionStatus]>([])
            let deliveryQueues = ConcurrencySafeContainer<[DispatchQueue]>([])
            await onParallelThreads(500) { index in
                let clock = ManualClock()
                let provider = MockSessionProvider(
                    session: MockSession(expiresIn: 3600, from: clock.now),
                    eventsOnInitialize: [.fetchingSession, .sessionFetched(isInitialFetch: true)]
                )
                let handle = AuthSessionHandle(
                    sessionProvider: provider,
                    biometricAuthenticator: MockBiometricAuthenticator(),
                    activationSignal: activation,
                    clock: clock
                )
                let recorder = RecordingAuthSessionDelegate(label: "construction-\(index)")
                handle.subscribeDelegate(recorder, receive: recorder.queue)
                deliveryQueues.withLock { $0.append(recorder.queue) }
                provider.publish(.sessionSignIn)
                statuses.withLock { $0.append(handle.sessionStatus) }
                weakHandles.withLock { $0.append(WeakBox(handle)) }
                weakProviders.withLock { $0.append(WeakBox(provider)) }
            }
            #expect(statuses.withLock { $0 } == Array(repeating: .signedIn, count: 500))
            // A delivery still running holds its handle for the length of the callback.
            for queue in deliveryQueues.withLock({ $0 }) {
                await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            }
            #expect(weakHandles.withLock { $0.filter { $0.object != nil }.count } == 0)
            #expect(weakProviders.withLock { $0.filter { $0.object != nil }.count } == 0)
            #expect(activation.observerCount == 0)
        }

        @Test("inputs from 8 threads: every delegate and the main-actor listener see the same chain")
        func orderedDeliveryToEveryListener() async {
            let harness = Harness(expiresIn: 3600)
            let others = (0..<3).map { RecordingAuthSessionDelegate(label: "ordered-\($0)") }
            for recorder in others {
                harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
            }
            let mainActorChanges = ConcurrencySafeContainer<[String]>([])
            let listener = SessionDelegateEventProxy { event in
                if case .sessionStatusChanged(let old, let new) = event {
                    mainActorChanges.withLock { $0.append("\(old) → \(new)") }
                }
            }
            harness.handle.subscribeEventPublisher(listener)
            let events: [AuthSessionEvent] = [
                .fetchingSession, .sessionSignIn, .sessionSignedOut(error: nil), .sessionFetched(isInitialFetch: false),
            ]
            await onParallelThreads(8) { thread in
                for step in 0..<1_000 {
                    harness.provider.publish(events[(thread + step) % events.count])
                }
            }
            await harness.handle.waitUntilIdle()
            for recorder in [harness.recorder] + others {
                await recorder.drain()
            }
            // Everything for the listener was enqueued on the main queue before this hop.
            await withCheckedContinuation { continuation in
                DispatchQueue.main.async { DispatchQueue.main.async { continuation.resume() } }
            }
            let reference = harness.recorder.statusChanges
            #expect(isChain(reference, from: .syncing))
            #expect(reference.last?.to == harness.handle.sessionStatus)
            for recorder in others {
                #expect(recorder.statusChanges == reference)
            }
            #expect(mainActorChanges.withLock { $0 } == reference.map(\.description))
        }
    }
}

/// A weak reference to any object, for leak checks.
struct WeakBox: @unchecked Sendable {
    // @unchecked: only read after the threads that wrote it have been joined.
    weak var object: AnyObject?

    init(_ object: AnyObject) {
        self.object = object
    }
}

/// Whether `part` appears in `whole` in order (not necessarily contiguously).
func isSubsequence<Element: Equatable>(_ part: [Element], of whole: [Element]) -> Bool {
    var remaining = whole[...]
    for element in part {
        guard let index = remaining.firstIndex(of: element) else { return false }
        remaining = remaining[(index + 1)...]
    }
    return true
}
