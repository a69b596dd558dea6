import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

/// The device flow's polling interval: never a loop, never below what the server asked for.
@Suite struct DevicePollingIntervalTests {

    /// A device authorization an app made up itself, as the public initializer allows.
    private func madeUpAuthorization(
        expiringIn seconds: TimeInterval,
        interval: TimeInterval,
        on clock: ManualClock
    )
        -> DeviceAuthorization
    {
        DeviceAuthorization(
            deviceCode: "dc-000000000",
            userCode: "ABCD",
            verificationURI: URL(string: "https://a.example/device")!,
            expiresAt: clock.now.addingTimeInterval(seconds),
            interval: interval
        )
    }

    /// A made-up authorization with a zero interval must not poll in a loop: once a second, the
    /// rule of `DeviceAuthorization.interval`.
    @Test func zeroIntervalPollsOnceASecond() async throws {
        let clock = ManualClock()
        let polls = ConcurrencySafeContainer(0)
        let transport = StubTransport { _ in
            polls.withLock { $0 += 1 }
            return .success(Fixture.json(400, #"{"error": "authorization_pending"}"#))
        }
        let service = Fixture.service(transport, clock: clock)
        let authorization = madeUpAuthorization(expiringIn: 600, interval: 0, on: clock)
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        try await clock.waitForSleepers(1)
        #expect(clock.advanceToNextDeadline() == 1)
        try await clock.waitForSleepers(1)
        #expect(polls.withLock { $0 } == 1)
        poll.cancel()
        _ = await poll.result
    }

    /// After `slow_down`, an outage backs off from the slowed interval, never below it.
    @Test func outageNeverLowersTheSlowedInterval() async throws {
        let clock = ManualClock()
        let answers = ConcurrencySafeContainer([
            Fixture.json(400, #"{"error": "slow_down"}"#), OAuth2HTTPResponse(statusCode: 503),
        ])
        let transport = StubTransport { _ in
            .success(
                answers.withLock {
                    $0.isEmpty ? Fixture.json(400, #"{"error": "authorization_pending"}"#) : $0.removeFirst()
                }
            )
        }
        let service = Fixture.service(transport, clock: clock)
        let authorization = madeUpAuthorization(expiringIn: 3_600, interval: 55, on: clock)
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        var waits: [TimeInterval] = []
        for _ in 0..<3 {
            try await clock.waitForSleepers(1)
            waits.append(clock.advanceToNextDeadline() ?? -1)
        }
        #expect(waits == [55, 60, 60], "slow_down: 60; then a 503 may not lower it")
        poll.cancel()
        _ = await poll.result
    }
}
