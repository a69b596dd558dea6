import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

@Suite("The server's clock, from the token endpoint's Date header")
struct ServerClockTests {

    /// The IMF-fixdate of `date`, as a server writes it.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    @Test("IMF-fixdates read to the second, as Foundation writes them, over four centuries")
    func readsIMFFixdates() {
        #expect(ServerClock.secondsSince1970(httpDate: "Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(ServerClock.secondsSince1970(httpDate: "Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(ServerClock.secondsSince1970(httpDate: "Sat, 29 Feb 2020 12:00:00 GMT") == 1_582_977_600)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let seconds = TimeInterval(Int.random(in: -5_000_000_000...10_000_000_000, using: &generator))
            let text = Self.httpDate(Date(timeIntervalSince1970: seconds))
            #expect(ServerClock.secondsSince1970(httpDate: text) == seconds, "\(text)")
        }
    }

    @Test(
        "anything but an IMF-fixdate is no date",
        arguments: [
            "", "garbage", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
            "Fri, 29 Feb 2019 12:00:00 GMT", "Sun, 31 Apr 1994 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 0६ Nov 1994 08:49:37 GMT", "Sun,  6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT ", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08-49-37 GMT",
        ]
    )
    func refusesOtherForms(text: String) {
        #expect(ServerClock.secondsSince1970(httpDate: text) == nil)
    }

    @Test(
        "an offset within the round trip's uncertainty, or beyond a day, is none; one beyond it is measured from the round trip's middle"
    )
    func offsetRules() {
        let sent = Date(timeIntervalSince1970: 1_800_000_000)
        let header = { (seconds: TimeInterval) in Self.httpDate(Date(timeIntervalSince1970: seconds)) }
        // In sync, 4 s round trip: the server wrote its answer in the middle.
        #expect(
            ServerClock.offset(dateHeader: header(1_800_000_002), sentAt: sent, receivedAt: sent + 4, limit: 86_400)
                == nil
        )
        // 10 minutes ahead.
        let ahead = ServerClock.offset(
            dateHeader: header(1_800_000_602),
            sentAt: sent,
            receivedAt: sent + 4,
            limit: 86_400
        )
        #expect(ahead == 600.5)
        // 10 minutes behind.
        #expect(
            ServerClock.offset(dateHeader: header(1_799_999_402), sentAt: sent, receivedAt: sent + 4, limit: 86_400)
                == -599.5
        )
        // A round trip of a minute hides a 20 s offset.
        #expect(
            ServerClock.offset(dateHeader: header(1_800_000_050), sentAt: sent, receivedAt: sent + 60, limit: 86_400)
                == nil
        )
        // Two days off: not believed.
        #expect(
            ServerClock.offset(dateHeader: header(1_800_172_800), sentAt: sent, receivedAt: sent + 1, limit: 86_400)
                == nil
        )
        // No header, an unreadable one, a clock that went back during the request.
        #expect(ServerClock.offset(dateHeader: nil, sentAt: sent, receivedAt: sent, limit: 86_400) == nil)
        #expect(ServerClock.offset(dateHeader: "soon", sentAt: sent, receivedAt: sent, limit: 86_400) == nil)
        #expect(
            ServerClock.offset(dateHeader: header(1_800_000_602), sentAt: sent, receivedAt: sent - 5, limit: 86_400)
                == nil
        )
    }

    /// A token answer whose ID token the server issued on its own clock, `serverAhead` seconds
    /// ahead of the device's, with the server's `Date` header (or none).
    private func answer(clock: ManualClock, serverAhead: TimeInterval, sendsDate: Bool) -> OAuth2HTTPResponse {
        let serverNow = clock.now.addingTimeInterval(serverAhead)
        let idToken = Fixture.idToken(Fixture.claims(now: serverNow))
        return Fixture.json(
            200,
            Fixture.tokenJSON(extra: #", "id_token": "\#(idToken)""#),
            headers: sendsDate ? ["Date": Self.httpDate(serverNow)] : [:]
        )
    }

    @Test(
        "a device clock 10 minutes off (behind or ahead) no longer fails a sign-in when the server sends its Date; the lifetime is the server's duration",
        arguments: [600.0, -600.0, 3 * 3_600.0]
    )
    func signInDespiteDeviceClock(serverAhead: TimeInterval) async throws {
        let clock = ManualClock()
        let transport = StubTransport(answer(clock: clock, serverAhead: serverAhead, sendsDate: true))
        let tokens = try await Fixture.service(transport, clock: clock)
            .obtainTokens(with: .password(username: "u", password: "p"))
        let offset = try #require(tokens.serverClockOffset)
        #expect(abs(offset - serverAhead) <= 1)
        #expect(tokens.expiresIn == 3600)
        #expect(tokens.user?.identifier == "user-42")
    }

    @Test("without a Date header, or with one two days off, the device's clock decides, as before: the sign-in fails")
    func noBelievableHeaderNoOffset() async throws {
        let clock = ManualClock()
        let grant = AuthGrant.password(username: "u", password: "p")
        let withoutHeader = StubTransport(answer(clock: clock, serverAhead: 600, sendsDate: false))
        let refused = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(withoutHeader, clock: clock).obtainTokens(with: grant)
        }
        #expect(refused?.kind == .misconfiguration)
        let farOff = StubTransport(answer(clock: clock, serverAhead: 2 * 86_400, sendsDate: true))
        await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(farOff, clock: clock).obtainTokens(with: grant)
        }
    }

    @Test("in sync, an answer reports no offset; a slow answer is judged from the round trip's middle")
    func inSyncReportsNone() async throws {
        let clock = ManualClock()
        let transport = StubTransport(answer(clock: clock, serverAhead: 0, sendsDate: true))
        let tokens = try await Fixture.service(transport, clock: clock)
            .obtainTokens(with: .password(username: "u", password: "p"))
        #expect(tokens.serverClockOffset == nil)

        // The server wrote its answer 15 s into a 30 s round trip, on a clock in sync.
        let start = clock.now
        transport.answer { _ in
            clock.advance(by: 30)
            let written = start.addingTimeInterval(15)
            let idToken = Fixture.idToken(Fixture.claims(now: written))
            return .success(
                Fixture.json(
                    200,
                    Fixture.tokenJSON(extra: #", "id_token": "\#(idToken)""#),
                    headers: ["Date": Self.httpDate(written)]
                )
            )
        }
        let slow = try await Fixture.service(transport, clock: clock)
            .obtainTokens(with: .password(username: "u", password: "p"))
        #expect(slow.serverClockOffset == nil)
    }
}
