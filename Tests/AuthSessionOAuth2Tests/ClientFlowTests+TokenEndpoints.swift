import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

extension ClientFlowTests {

    @Test func inactiveTokenNearItsExpiryIsNotRevoked() async throws {
        let clock = ManualClock()
        let transport = StubTransport(Fixture.json(200, #"{"active": false}"#))
        let service = Fixture.service(transport, clock: clock)
        func session(expiringIn seconds: TimeInterval) -> ManagedSession {
            ManagedSession(
                accessToken: Fixture.accessToken,
                expiresAt: clock.now.timeIntervalSince1970 + seconds,
                issuedAt: clock.now.timeIntervalSince1970,
                user: ManagedUser(identifier: "u")
            )
        }
        #expect(try await service.credentialState(for: session(expiringIn: 20)) == .authorized)
        #expect(try await service.credentialState(for: session(expiringIn: 59)) == .authorized)
        #expect(try await service.credentialState(for: session(expiringIn: 600)) == .revoked)
    }

    @Test func revokingADeadTokenIsNotAnError() async throws {
        for body in [
            #"{"error": "invalid_token", "error_description": "Token expired or revoked"}"#,
            #"{"error": "invalid_grant"}"#,
        ] {
            let transport = StubTransport(Fixture.json(400, body))
            try await Fixture.service(transport).revoke(Fixture.refreshToken, kind: .refreshToken)
        }
        let transport = StubTransport(Fixture.json(503, #"{"error": "temporarily_unavailable"}"#))
        await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).revoke(Fixture.refreshToken, kind: .refreshToken)
        }
    }
}
