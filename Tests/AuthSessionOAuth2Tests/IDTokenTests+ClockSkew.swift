import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

extension IDTokenTests {

    /// A refresh's new tokens survive a device clock minutes off: the old refresh token is spent.
    @Test func refreshKeepsTokensDespiteClockSkew() async throws {
        let clock = ManualClock()
        let serverNow = clock.now.addingTimeInterval(300)  // the device is 5 minutes behind
        let idToken = Fixture.idToken(Fixture.claims(now: serverNow))
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(idToken)""#)))
        let refreshed = try await Fixture.service(transport, clock: clock).refresh(Fixture.refreshToken, scope: nil)
        #expect(refreshed.idToken == idToken)

        let grant = AuthGrant.password(username: "u", password: "p")
        let signIn = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport, clock: clock).obtainTokens(with: grant)
        }
        #expect(signIn?.kind == .misconfiguration, "a sign-in still checks time: nothing is spent by refusing it")

        let wrongAudience = Fixture.idToken(Fixture.claims(now: serverNow, overrides: ["aud": "someone-else"]))
        transport.answer { _ in
            .success(Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(wrongAudience)""#)))
        }
        await #expect(throws: RemoteAuthError.self, "identity claims are still checked on refresh") {
            try await Fixture.service(transport, clock: clock).refresh(Fixture.refreshToken, scope: nil)
        }
    }
}
