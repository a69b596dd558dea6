import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// RFC 8628 polling, on a manual clock: nothing here waits in real time.
@Suite struct DeviceFlowTests {

    private static let start = #"""
        {"device_code": "dc-0123456789", "user_code": "WDJB-MJHT", "verification_uri": "https://a.example/device",
         "verification_uri_complete": "https://a.example/device?user_code=WDJB-MJHT", "expires_in": 600, "interval": 5}
        """#

    /// Answers the token endpoint from a queue; records the clock at each poll.
    private final class Poller: Sendable {
        let answers: ConcurrencySafeContainer<[OAuth2HTTPResponse]>
        let pollTimes = ConcurrencySafeContainer<[Date]>([])
        init(_ answers: [OAuth2HTTPResponse]) { self.answers = ConcurrencySafeContainer(answers) }
    }

    private func pending() -> OAuth2HTTPResponse { Fixture.json(400, #"{"error": "authorization_pending"}"#) }

    private func setUp(_ answers: [OAuth2HTTPResponse]) -> (OAuth2Service, ManualClock, Poller) {
        let clock = ManualClock()
        let poller = Poller(answers)
        let transport = StubTransport { request in
            if request.url.absoluteString.hasSuffix("device-authorization/") {
                return .success(Fixture.json(200, Self.start))
            }
            if request.url.absoluteString.hasSuffix("userinfo/") {
                return .success(Fixture.json(200, #"{"sub": "user-1"}"#))
            }
            poller.pollTimes.withLock { $0.append(clock.now) }
            return .success(
                poller.answers.withLock {
                    $0.isEmpty ? Fixture.json(400, #"{"error": "authorization_pending"}"#) : $0.removeFirst()
                }
            )
        }
        return (Fixture.service(transport, clock: clock), clock, poller)
    }

    @Test func pollsAtTheIntervalAndSlowsDownWhenTold() async throws {
        let (service, clock, poller) = setUp([
            pending(), Fixture.json(400, #"{"error": "slow_down"}"#), pending(), Fixture.json(200, Fixture.tokenJSON()),
        ])
        let authorization = try await service.startDeviceAuthorization()
        #expect(authorization.userCode == "WDJB-MJHT")
        #expect(authorization.interval == 5)
        #expect(!authorization.description.contains("dc-0123456789"))
        let start = clock.now
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        for _ in 0..<4 {
            try await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        let tokens = try await poll.value
        #expect(tokens.accessToken == Fixture.accessToken)
        let offsets = poller.pollTimes.withLock { $0 }.map { $0.timeIntervalSince(start) }
        #expect(offsets == [5, 10, 20, 30], "slow_down adds 5 s for the rest of the flow")
    }

    @Test func expiryEndsTheFlowTerminally() async throws {
        let (service, clock, _) = setUp([])
        let authorization = try await service.startDeviceAuthorization()
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        while true {
            try await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
            if clock.now >= authorization.expiresAt { break }
        }
        let error = await #expect(throws: RemoteAuthError.self) { try await poll.value }
        #expect(error?.serverCode == "expired_token")
        #expect(error?.kind == .terminal)
    }

    @Test func declinedIsTerminalAndOutagesKeepPolling() async throws {
        let (service, clock, poller) = setUp([
            OAuth2HTTPResponse(statusCode: 503), Fixture.json(400, #"{"error": "access_denied"}"#),
        ])
        let authorization = try await service.startDeviceAuthorization()
        let start = clock.now
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        for _ in 0..<2 {
            try await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        let error = await #expect(throws: RemoteAuthError.self) { try await poll.value }
        #expect(error?.serverCode == "access_denied")
        #expect(
            poller.pollTimes.withLock { $0 }.map { $0.timeIntervalSince(start) } == [5, 15],
            "an outage doubles the interval"
        )
    }

    @Test func cancellationEndsThePolling() async throws {
        let (service, clock, poller) = setUp([])
        let authorization = try await service.startDeviceAuthorization()
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        try await clock.waitForSleepers(1)
        poll.cancel()
        let error = await #expect(throws: RemoteAuthError.self) { try await poll.value }
        #expect(error?.reason == .cancelled)
        #expect(poller.pollTimes.withLock { $0 }.isEmpty)
    }

    @Test(arguments: [
        #"{"user_code": "A", "verification_uri": "https://a/d", "expires_in": 600}"#,
        #"{"device_code": "d", "verification_uri": "https://a/d", "expires_in": 600}"#,
        #"{"device_code": "d", "user_code": "A", "expires_in": 600}"#,
        #"{"device_code": "d", "user_code": "A", "verification_uri": "https://a/d", "expires_in": -1}"#,
        #"{"device_code": "d", "user_code": "A", "verification_uri": "https://a/d", "expires_in": 600, "interval": "5"}"#,
    ])
    func hostileStartAnswers(body: String) async throws {
        let service = Fixture.service(StubTransport(Fixture.json(200, body)))
        let error = await #expect(throws: RemoteAuthError.self) { try await service.startDeviceAuthorization() }
        #expect(error?.kind == .transient)
    }

    /// The one rule of `DeviceAuthorization.interval`, at its edges, from the server's answer:
    /// the value stored is the wait polling keeps, exactly, on the clock.
    @Test(arguments: [
        (#", "interval": 0.5"#, 1.0), (#", "interval": 0"#, 1), (#", "interval": -3"#, 1), ("", 5),
        (#", "interval": 1"#, 1), (#", "interval": 1.5"#, 1.5), (#", "interval": 7"#, 7),
    ])
    func serverIntervalRule(member: String, expected: TimeInterval) async throws {
        let clock = ManualClock()
        let polls = ConcurrencySafeContainer<[Date]>([])
        let transport = StubTransport { request in
            if request.url.absoluteString.hasSuffix("device-authorization/") {
                return .success(
                    Fixture.json(
                        200,
                        #"{"device_code": "dc-0123456789", "user_code": "WDJB-MJHT", "#
                            + #""verification_uri": "https://a.example/device", "expires_in": 600\#(member)}"#
                    )
                )
            }
            polls.withLock { $0.append(clock.now) }
            return .success(Fixture.json(400, #"{"error": "authorization_pending"}"#))
        }
        let service = Fixture.service(transport, clock: clock)
        let authorization = try await service.startDeviceAuthorization()
        #expect(authorization.interval == expected)
        let start = clock.now
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        for _ in 0..<3 {
            try await clock.waitForSleepers(1, timeout: 300)
            clock.advanceToNextDeadline()
        }
        try await clock.waitForSleepers(1, timeout: 300)
        poll.cancel()
        _ = await poll.result
        #expect(polls.withLock { $0 }.map { $0.timeIntervalSince(start) } == [expected, 2 * expected, 3 * expected])
    }

    /// The same rule for an authorization made up or changed by the app.
    @Test func madeUpIntervalRule() {
        func interval(_ seconds: TimeInterval) -> TimeInterval {
            DeviceAuthorization(
                deviceCode: "dc",
                userCode: "U",
                verificationURI: URL(string: "https://a.example/device")!,
                expiresAt: Date(),
                interval: seconds
            ).interval
        }
        #expect(interval(.nan) == 5)
        #expect(interval(.infinity) == 5)
        #expect(interval(-.infinity) == 5)
        #expect(interval(0.5) == 1)
        #expect(interval(0) == 1)
        #expect(interval(-1) == 1)
        #expect(interval(1) == 1)
        #expect(interval(2.5) == 2.5)
        var changed = DeviceAuthorization(
            deviceCode: "dc",
            userCode: "U",
            verificationURI: URL(string: "https://a.example/device")!,
            expiresAt: Date()
        )
        #expect(changed.interval == 5, "RFC 8628's default")
        changed.interval = 0.25
        #expect(changed.interval == 1)
        changed.interval = .nan
        #expect(changed.interval == 5)
    }

    /// An interval longer than what is left of the codes' life: the flow ends at the expiry,
    /// not one interval later, and sends no poll after it.
    @Test func aWaitPastTheExpiryEndsAtTheExpiry() async throws {
        let (service, clock, poller) = setUp([])
        var authorization = try await service.startDeviceAuthorization()
        authorization.interval = 1_000
        let start = clock.now
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        try await clock.waitForSleepers(1, timeout: 300)
        #expect(clock.advanceToNextDeadline() == 600)
        let error = await #expect(throws: RemoteAuthError.self) { try await poll.value }
        #expect(error?.serverCode == "expired_token")
        #expect(poller.pollTimes.withLock { $0 }.isEmpty)
        #expect(clock.now == start.addingTimeInterval(600))
    }
}
