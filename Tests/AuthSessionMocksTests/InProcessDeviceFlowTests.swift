import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

/// The in-process server's device flow answers as RFC 8628 §3.5 says, so that a client's polling
/// can be tested against it.
@Suite struct InProcessDeviceFlowTests {

    private let ada = ManagedUser(identifier: "ada", name: "Ada")

    private func poll(
        _ server: InProcessAuthorizationServer,
        _ code: InProcessAuthorizationServer.IssuedDeviceCode
    ) async -> Result<IssuedTokens, RemoteAuthError> {
        do {
            return .success(try await server.obtainTokens(with: .deviceCode(code.deviceCode)))
        } catch {
            return .failure(error)
        }
    }

    private func code(of result: Result<IssuedTokens, RemoteAuthError>) -> String? {
        if case .failure(let error) = result { return error.serverCode }
        return nil
    }

    @Test func pendingThenTokensOnceThenUsed() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let issued = server.issueDeviceCode(interval: 5, scope: ["read"])
        #expect(!issued.description.contains(issued.deviceCode))
        #expect(code(of: await poll(server, issued)) == "authorization_pending")
        clock.advance(by: 5)
        server.approveDeviceCode(issued.userCode, as: ada)
        let tokens = try await poll(server, issued).get()
        #expect(tokens.user?.identifier == "ada")
        #expect(tokens.scope == ["read"])
        clock.advance(by: 5)
        #expect(code(of: await poll(server, issued)) == "invalid_grant", "a device code is redeemed once")
        #expect(server.devicePollTimes.count == 3)
    }

    @Test func aPollSoonerThanTheIntervalIsToldToSlowDownForGood() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let issued = server.issueDeviceCode(interval: 5)
        #expect(code(of: await poll(server, issued)) == "authorization_pending")
        clock.advance(by: 4.9)
        #expect(code(of: await poll(server, issued)) == "slow_down")
        clock.advance(by: 5)
        #expect(code(of: await poll(server, issued)) == "slow_down", "the interval is 10 s now")
        clock.advance(by: 15)
        #expect(code(of: await poll(server, issued)) == "authorization_pending")
    }

    @Test func deniedExpiredAndScriptedSlowDown() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let denied = server.issueDeviceCode()
        server.denyDeviceCode(denied.userCode)
        #expect(code(of: await poll(server, denied)) == "access_denied")

        let expired = server.issueDeviceCode()
        server.expireDeviceCode(expired.userCode)
        #expect(code(of: await poll(server, expired)) == "expired_token")

        let timedOut = server.issueDeviceCode(expiresIn: 60)
        clock.advance(by: 60)
        #expect(code(of: await poll(server, timedOut)) == "expired_token", "past its expiry on the clock")

        let slowed = server.issueDeviceCode(interval: 5)
        server.answerSlowDown(toNextPollsOf: slowed.userCode)
        #expect(code(of: await poll(server, slowed)) == "slow_down")
        clock.advance(by: 10)
        #expect(code(of: await poll(server, slowed)) == "authorization_pending")
    }
}
