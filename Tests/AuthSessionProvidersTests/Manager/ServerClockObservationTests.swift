import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("The server's clock, as the observer hears of it")
struct ServerClockObservationTests {

    /// A started manager on a manual clock, its remote the in-process server behind `AdvRemote`,
    /// its observer recording.
    private func observedManager() -> (
        ManualClock, InProcessAuthorizationServer, AdvRemote, RecordingObserver, ManagedSessionProvider
    ) {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        let observer = RecordingObserver()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: remote,
            retryPolicy: .never,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                observer: observer
            )
        )
        provider.initializeSessionProvider(for: AdvEventLog().proxy)
        return (clock, server, remote, observer, provider)
    }

    @Test(
        "a sign-in and a refresh whose answers show the server's clock off are each reported; the session's expiry is a duration from the device's now"
    )
    func offsetReportedExpiryUnchanged() async throws {
        let (clock, server, remote, observer, provider) = observedManager()
        remote.serverClockOffset = 600
        let session = try await provider.signIn(with: advGrant(advAda))
        #expect(session.expiresAt == clock.now.timeIntervalSince1970 + server.accessTokenLifetime)
        remote.serverClockOffset = -42.5
        try await provider.refresh()
        await provider.waitUntilIdle()

        let offsets = observer.observations.compactMap { observation -> TimeInterval? in
            if case .serverClockOffset(let offset) = observation { return offset }
            return nil
        }
        #expect(offsets == [600, -42.5])
        let lines = observer.observations.filter { $0.name == "serverClockOffset" }
        #expect(lines.map(\.description) == ["serverClockOffset(+600.0 s)", "serverClockOffset(-42.5 s)"])
        #expect(lines.map(\.severity) == [.warning, .info])
    }

    @Test("answers that show no offset report none")
    func noOffsetNoObservation() async throws {
        let (_, _, _, observer, provider) = observedManager()
        _ = try await provider.signIn(with: advGrant(advAda))
        try await provider.refresh()
        await provider.waitUntilIdle()
        #expect(!observer.observations.contains { $0.name == "serverClockOffset" })
        #expect(observer.observations.contains { $0.name == "refreshFinished" })
    }
}
