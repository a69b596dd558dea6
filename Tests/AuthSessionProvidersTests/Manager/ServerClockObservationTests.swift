import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("The server's clock, as the observer hears of it")
struct ServerClockObservationTests {

    @Test(
        "a sign-in and a refresh whose answers show the server's clock off are each reported; the session's expiry is a duration from the device's now"
    )
    func offsetReportedExpiryUnchanged() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let remote = AdvRemote(server)
        remote.serverClockOffset = 600
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
        let clock = ManualClock()
        let server = advServer(clock)
        let observer = RecordingObserver()
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: AdvRemote(server),
            retryPolicy: .never,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                observer: observer
            )
        )
        provider.initializeSessionProvider(for: AdvEventLog().proxy)
        _ = try await provider.signIn(with: advGrant(advAda))
        try await provider.refresh()
        await provider.waitUntilIdle()
        #expect(!observer.observations.contains { $0.name == "serverClockOffset" })
        #expect(observer.observations.contains { $0.name == "refreshFinished" })
    }
}
