import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

@Suite("AuthSessionStatus")
struct AuthSessionStatusTests {

    @Test("each case answers exactly one query", arguments: AuthSessionStatus.allCases)
    func exactlyOneQuery(status: AuthSessionStatus) {
        let answers = [
            status.isSyncing, status.isSignedIn, status.isSignedOut, status.isValidating,
            status.isBiometricAuthentication,
        ]
        #expect(answers.filter { $0 }.count == 1)
        #expect(status.isLoadingStatus == [.syncing, .validating, .biometricAuthentication].contains(status))
    }

    @Test("the spec's internal queries")
    func internalQueries() {
        #expect(
            AuthSessionStatus.allCases.filter(\.allowsBiometricAuthentication) == [.syncing, .signedIn, .validating]
        )
        #expect(AuthSessionStatus.allCases.filter(\.allowsLocalValidation) == [.syncing, .signedIn])
    }

    @Test("hashable, five distinct cases, readable descriptions")
    func hashableAndDescribed() {
        #expect(Set(AuthSessionStatus.allCases).count == 5)
        #expect(
            AuthSessionStatus.allCases.map(\.description) == [
                "syncing", "signedIn", "signedOut", "validating", "biometricAuthentication",
            ]
        )
        let existential: any AuthSessionStatusProtocol = AuthSessionStatus.signedIn
        #expect(existential.isSignedIn && !existential.isLoadingStatus)
    }
}

@Suite("Activation signals")
struct ActivationSignalTests {

    @Test("NotificationCenterActivationSignal calls its handler per notification until cancelled")
    func notificationCenterSignal() {
        let center = NotificationCenter()
        let signal = NotificationCenterActivationSignal(center: center, name: .authSessionApplicationDidBecomeActive)
        let count = ConcurrencySafeContainer(0)
        let observation = signal.observe { count.withLock { $0 += 1 } }
        center.post(name: .authSessionApplicationDidBecomeActive, object: nil)
        center.post(name: .authSessionApplicationDidBecomeActive, object: nil)
        center.post(name: Notification.Name("unrelated"), object: nil)
        #expect(count.withLock { $0 } == 2)
        observation.cancel()
        #expect(observation.isCancelled)
        center.post(name: .authSessionApplicationDidBecomeActive, object: nil)
        #expect(count.withLock { $0 } == 2)
    }

    @Test("a handle on a NotificationCenter signal revalidates when the Linux notification is posted")
    func handleOnNotificationCenter() {
        let center = NotificationCenter()
        let clock = ManualClock()
        let provider = MockSessionProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: NotificationCenterActivationSignal(center: center),
            clock: clock
        )
        provider.publish(.sessionFetched(isInitialFetch: true))
        center.post(name: .authSessionApplicationDidBecomeActive, object: nil)
        clock.advance(by: 3600)
        center.post(name: .authSessionApplicationDidBecomeActive, object: nil)
        #expect(handle.sessionStatus == .signedOut)
    }

    @Test("on this platform the default notification is the one a Linux client posts")
    func platformName() {
        #if !canImport(UIKit) && !canImport(AppKit)
        #expect(Notification.Name.authSessionPlatformDidBecomeActive == .authSessionApplicationDidBecomeActive)
        #endif
        #expect(NotificationCenterActivationSignal().name == .authSessionPlatformDidBecomeActive)
    }

    @Test("an observation cancels itself when deallocated, and only once")
    func observationDeinitCancels() {
        let cancels = ConcurrencySafeContainer(0)
        do {
            let observation = AppActivationObservation { cancels.withLock { $0 += 1 } }
            observation.cancel()
            observation.cancel()
        }
        do {
            _ = AppActivationObservation { cancels.withLock { $0 += 1 } }
        }
        #expect(cancels.withLock { $0 } == 2)
    }
}

@Suite("Biometric authenticators and clocks")
struct AuthenticatorAndClockTests {

    @Test("SimulatedBiometricAuthenticator ends every prompt as configured")
    func simulated() async {
        await #expect(throws: Never.self) {
            try await SimulatedBiometricAuthenticator(outcome: .success).authenticate(reason: "r")
        }
        for error in BiometricAuthenticationError.allCases {
            await #expect(throws: error) {
                try await SimulatedBiometricAuthenticator(outcome: .failure(error)).authenticate(reason: "r")
            }
        }
    }

    @Test("a handle with a simulated success unlocks at launch")
    func simulatedSuccessUnlocks() async throws {
        let recorder = RecordingAuthSessionDelegate()
        let clock = ManualClock()
        let provider = MockSessionProvider(
            session: MockSession(expiresIn: 3600, from: clock.now),
            isBioMetricAuthenticationEnabled: true
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: SimulatedBiometricAuthenticator(outcome: .success),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        provider.publish(.sessionFetched(isInitialFetch: true))
        try await recorder.waitForStatus(.signedIn)
        #expect(handle.sessionStatus == .signedIn)
    }

    @Test("SystemClock tells the system date")
    func systemClock() {
        let before = Date()
        let now = SystemClock().now
        #expect(now >= before && now <= Date())
    }
}

@Suite("ConcurrencySafeContainer")
struct ConcurrencySafeContainerTests {

    @Test("increments from many threads are all kept")
    func noLostUpdates() {
        let counter = ConcurrencySafeContainer(0)
        DispatchQueue.concurrentPerform(iterations: 10_000) { _ in
            counter.withLock { $0 += 1 }
        }
        #expect(counter.withLock { $0 } == 10_000)
    }

    @Test("withLock returns the body's result and rethrows its error, releasing the lock")
    func resultsAndErrors() {
        let box = ConcurrencySafeContainer([1, 2, 3])
        #expect(box.withLock { $0.reduce(0, +) } == 6)
        #expect(throws: URLError.self) {
            try box.withLock { _ in throw URLError(.badURL) }
        }
        #expect(box.withLock { $0.count } == 3)
    }
}

@Suite("Simulated prompt latency")
struct SimulatedLatencyTests {

    @Test("a simulated prompt with latency keeps the status in biometricAuthentication while it is up")
    func latencyKeepsPromptUp() async throws {
        let clock = ManualClock()
        let provider = MockSessionProvider(
            session: MockSession(expiresIn: 3600, from: clock.now),
            isBioMetricAuthenticationEnabled: true,
            eventsOnInitialize: [.fetchingSession, .sessionFetched(isInitialFetch: true)]
        )
        weak var released: AuthSessionHandle<MockSessionProvider>?
        do {
            // A minute-long prompt: the assertions below cannot race its end.
            let handle = mockHandle(
                provider,
                authenticator: SimulatedBiometricAuthenticator(outcome: .success, latency: 60),
                clock: clock
            )
            released = handle
            #expect(handle.sessionStatus == .biometricAuthentication)
            #expect(handle.isBiometricAuthenticationInProcess)
        }
        // Releasing the handle cancels the prompt; nothing else happens.
        #expect(released == nil)
        #expect(provider.signOutCount == 0)
    }

    @Test("a cancelled simulated prompt ends with canceledBySystem")
    func latencyCancellation() async {
        let prompt = Task {
            try await SimulatedBiometricAuthenticator(outcome: .success, latency: 60).authenticate(reason: "r")
        }
        prompt.cancel()
        await #expect(throws: BiometricAuthenticationError.canceledBySystem) { try await prompt.value }
    }
}
