import AuthSessionInterface
import Foundation
import Testing

@Suite("AuthSessionProtocol defaults")
struct AuthSessionProtocolTests {

    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func session(expiringIn seconds: TimeInterval) -> ContractSession {
        ContractSession(
            accessToken: "t",
            expiresAt: now.timeIntervalSince1970 + seconds,
            user: ContractUser(identifier: "u")
        )
    }

    @Test("expiresIn is the time left until expiresAt")
    func expiresInIsTimeLeft() {
        #expect(session(expiringIn: 500).expiresIn(at: now) == 500)
        #expect(session(expiringIn: 0.25).expiresIn(at: now) == 0.25)
    }

    @Test("expiresIn is zero, never negative, once expiresAt has passed", arguments: [0, -0.001, -1, -100, -86_400])
    func expiresInNeverNegative(offset: TimeInterval) {
        #expect(session(expiringIn: offset).expiresIn(at: now) == 0)
    }

    @Test("a session exactly 120 s from expiry is still valid")
    func exactlyAtBufferIsValid() {
        #expect(session(expiringIn: 120).isSessionExpired(at: now) == false)
    }

    @Test("a session just under 120 s from expiry is expired")
    func justUnderBufferIsExpired() {
        #expect(session(expiringIn: 119.999).isSessionExpired(at: now))
        #expect(session(expiringIn: 60).isSessionExpired(at: now))
        #expect(session(expiringIn: 0).isSessionExpired(at: now))
        #expect(session(expiringIn: -10).isSessionExpired(at: now))
    }

    @Test("a session just over 120 s from expiry is valid")
    func justOverBufferIsValid() {
        #expect(session(expiringIn: 120.001).isSessionExpired(at: now) == false)
        #expect(session(expiringIn: 3600).isSessionExpired(at: now) == false)
    }

    @Test("the buffer is 120 seconds")
    func bufferIs120Seconds() {
        #expect(ContractSession.expiryBuffer == 120)
    }

    @Test("the parameterless members use the system date")
    func parameterlessMembersUseSystemDate() {
        let before = Date()
        let longLived = ContractSession(
            accessToken: "t",
            expiresAt: before.timeIntervalSince1970 + 3600,
            user: ContractUser(identifier: "u")
        )
        // Within a second of the hour: the system clock moved on a little, never backwards past it.
        let remaining = longLived.expiresIn
        #expect(remaining > 3599 && remaining <= 3600.001)
        #expect(longLived.isSessionExpired == false)

        let past = ContractSession(
            accessToken: "t",
            expiresAt: before.timeIntervalSince1970 - 1,
            user: ContractUser(identifier: "u")
        )
        #expect(past.expiresIn == 0)
        #expect(past.isSessionExpired)
    }
}
