import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// How a launch in the newcomer's scenario ends, and the observations it makes.
private enum LaunchScenario: CaseIterable {
    /// The store's bytes are no session: `storeFailed(launch)`, then `signedOut`.
    case corruptStore
    /// A stored session that is due, whose refresh token the server refuses: the launch
    /// refreshes, the refresh ends the session, and the session is signed out.
    case refusedRefresh

    var expectedNames: [String] {
        switch self {
        case .corruptStore: ["storeFailed", "signedOut"]
        case .refusedRefresh: ["refreshStarted", "refreshFinished", "signedOut"]
        }
    }
}

/// One launch as the README writes it: the observer in the configuration, a handle, then
/// `waitUntilIdle()`. Returns the observer, once the manager and its handle are released.
private func launch(
    _ scenario: LaunchScenario,
    server: InProcessAuthorizationServer,
    clock: ManualClock
) async -> RecordingObserver {
    let observer = RecordingObserver()
    let store: MockSessionStore
    switch scenario {
    case .corruptStore:
        store = MockSessionStore(session: nil)
        store.corruptNextLoad()
    case .refusedRefresh:
        let now = clock.now.timeIntervalSince1970
        store = MockSessionStore(
            session: ManagedSession(
                accessToken: "spent-access",
                refreshToken: "refused-refresh-\(UUID().uuidString)",
                expiresAt: now + 5,
                issuedAt: now - 3595,
                user: alice
            )
        )
    }
    let provider = ManagedSessionProvider(
        store: store,
        remote: server,
        retryPolicy: immediateRetries,
        clock: clock,
        configuration: .init(
            checksCredentialState: false,
            activationSignal: ManualActivationSignal(),
            observer: observer
        )
    )
    let handle = AuthSessionHandle(
        sessionProvider: provider,
        biometricAuthenticator: MockBiometricAuthenticator(),
        activationSignal: ManualActivationSignal(),
        clock: clock
    )
    await provider.waitUntilIdle()
    _ = handle
    return observer
}

@Suite("Observations are all delivered, in order, by the time the manager's waits return")
struct ObservationFlushTests {

    @Test("200 launches of four managers at once lose no observation: each is heard by waitUntilIdle's return")
    func launchesAtOnceLoseNothing() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        var failures: [String] = []
        for round in 0..<200 {
            let heard = await withTaskGroup(of: (Int, [String]).self) { group in
                for index in 0..<4 {
                    let scenario = LaunchScenario.allCases[(round + index) % LaunchScenario.allCases.count]
                    group.addTask {
                        let observer = await launch(scenario, server: server, clock: clock)
                        // Read at once: no wait on the observer's queue.
                        return (index, observer.observations.map(\.name))
                    }
                }
                var heard: [Int: [String]] = [:]
                for await (index, names) in group { heard[index] = names }
                return heard
            }
            for index in 0..<4 {
                let scenario = LaunchScenario.allCases[(round + index) % LaunchScenario.allCases.count]
                if heard[index] != scenario.expectedNames {
                    failures.append("round \(round), manager \(index): \(heard[index] ?? [])")
                }
            }
        }
        #expect(failures.count == 0, "\(failures.count) of 800 launches lost observations: \(failures.prefix(5))")
    }

    @Test("a manager released right after waitUntilIdle(): every observation of its launch was delivered")
    func releasedManagerLosesNothing() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        var failures: [String] = []
        for round in 0..<100 {
            let scenario = LaunchScenario.allCases[round % LaunchScenario.allCases.count]
            // The manager and its handle are released when `launch` returns.
            let observer = await launch(scenario, server: server, clock: clock)
            let names = observer.observations.map(\.name)
            if names != scenario.expectedNames { failures.append("round \(round): \(names)") }
        }
        #expect(failures.count == 0, "\(failures.count) of 100 launches lost observations: \(failures.prefix(5))")
    }

    @Test("flushObservations() returns once a slow observer heard everything made before it, in order")
    func flushWaitsForASlowObserver() async throws {
        let manager = ObservedManager()
        manager.observer.holdNext()
        try await manager.signIn()
        let flushed = Task {
            await manager.provider.flushObservations()
            return manager.observer.lines
        }
        // The observer is held inside its first observation: the flush waits for it.
        manager.observer.release()
        #expect(
            await flushed.value == ["signInStarted(password)", "signInFinished(password, succeeded in 0.000 s)"]
        )
    }

    @Test("an observer that reads the manager from inside observe does not stall a flush")
    func observerReadingTheManager() async throws {
        let manager = ObservedManager()
        let provider = manager.provider
        manager.observer.inside.withLock { $0 = { _ = provider.session } }
        try await manager.signIn()
        await provider.waitUntilIdle()
        #expect(manager.observer.lines.count == 2)
    }
}
