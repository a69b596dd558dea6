import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// The claim checks, one rule at a time, through the token endpoint as an app meets them.
@Suite struct IDTokenTests {

    private static let now = ManualClock.defaultStart

    private func exchange(_ claims: [String: Any], nonce: String? = nil) async throws(RemoteAuthError) -> IssuedTokens {
        let token = Fixture.idToken(claims)
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(token)""#)))
        let grant = AuthGrant.authorizationCode(
            "code-123456",
            codeVerifier: "verifier",
            redirectURI: URL(string: "app:/cb")!,
            nonce: nonce
        )
        return try await Fixture.service(transport, clock: ManualClock(now: Self.now)).obtainTokens(with: grant)
    }

    private func rejection(_ overrides: [String: Any], nonce: String? = nil) async -> IDTokenValidationError? {
        do {
            _ = try await exchange(Fixture.claims(now: Self.now, overrides: overrides), nonce: nonce)
            return nil
        } catch {
            #expect(error.kind == .misconfiguration)
            guard case .invalidIDToken(let reason) = error.reason else { return nil }
            return reason
        }
    }

    @Test func validTokenPasses() async throws {
        let tokens = try await exchange(Fixture.claims(now: Self.now, overrides: ["nonce": "n-1"]), nonce: "n-1")
        #expect(tokens.user?.identifier == "user-42")
        #expect(tokens.idToken != nil)
    }

    @Test func issuer() async {
        #expect(
            await rejection(["iss": "https://evil.example.com/o"])
                == .issuerMismatch(
                    expected: Fixture.issuer,
                    actual: "https://evil.example.com/o"
                )
        )
        #expect(await rejection(["iss": Fixture.issuer + "/"]) != nil, "issuers compare exactly")
    }

    @Test func audience() async {
        #expect(
            await rejection(["aud": "another-client"])
                == .audienceMismatch(
                    expected: Fixture.clientID,
                    actual: ["another-client"]
                )
        )
        #expect(await rejection(["aud": ["x", "y"]]) != nil)
        #expect(
            await rejection(["aud": [Fixture.clientID, "api"]]) == .missingClaim("azp"),
            "several audiences need azp"
        )
        #expect(await rejection(["aud": [Fixture.clientID, "api"], "azp": Fixture.clientID]) == nil)
        #expect(
            await rejection(["azp": "someone-else"])
                == .authorizedPartyMismatch(
                    expected: Fixture.clientID,
                    actual: "someone-else"
                )
        )
        #expect(await rejection(["aud": 7]) == .missingClaim("aud"))
        #expect(await rejection(["aud": [String]()]) == .missingClaim("aud"))
    }

    @Test func timeClaimsWithLeeway() async {
        let t = Self.now.timeIntervalSince1970
        #expect(await rejection(["exp": t - 61]) == .expired(at: Date(timeIntervalSince1970: t - 61)))
        #expect(await rejection(["exp": t - 59]) == nil, "within the 60 s leeway")
        #expect(await rejection(["iat": t + 61]) == .issuedInFuture(at: Date(timeIntervalSince1970: t + 61)))
        #expect(await rejection(["iat": t + 59]) == nil)
        #expect(await rejection(["nbf": t + 61]) == .notYetValid(until: Date(timeIntervalSince1970: t + 61)))
        #expect(await rejection(["nbf": t + 30]) == nil)
        #expect(await rejection(["exp": "tomorrow"]) == .missingClaim("exp"))
        #expect(await rejection(["nbf": "now"]) == .missingClaim("nbf"))
    }

    @Test func nonce() async {
        #expect(await rejection(["nonce": "other"], nonce: "expected") == .nonceMismatch)
        #expect(await rejection([:], nonce: "expected") == .nonceMismatch, "a missing nonce is a mismatch")
        #expect(await rejection(["nonce": "whatever"]) == nil, "no nonce expected, none checked")
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "!!!.e30.sig", "e30.!!!.sig", "W10.e30.sig"])
    func malformedShapes(token: String) {
        #expect(throws: IDTokenValidationError.self) { try IDTokenClaims(parsing: token) }
    }

    @Test func unsecuredTokensAreRefused() {
        let header = Data(#"{"alg":"none"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let body = Data(#"{"iss":"x","sub":"y","aud":"z","exp":1,"iat":1}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "")
        #expect(throws: IDTokenValidationError.malformed("unsecured (alg none or missing)")) {
            try IDTokenClaims(parsing: "\(header).\(body).")
        }
    }

    @Test func oversizedTokenIsRefusedBeforeDecoding() {
        let huge = String(repeating: "a", count: IDTokenClaims.maximumLength + 1)
        #expect(throws: IDTokenValidationError.malformed("longer than \(IDTokenClaims.maximumLength) bytes")) {
            try IDTokenClaims(parsing: huge)
        }
    }

    @Test func userFromClaimsComposesTheName() throws {
        let token = Fixture.idToken(
            Fixture.claims(
                now: Self.now,
                overrides: [
                    "name": NSNull(), "given_name": "Ada",
                    "family_name": "Lovelace",
                ]
            )
        )
        let claims = try IDTokenClaims(parsing: token)
        #expect(claims.user.name == "Ada Lovelace")
        #expect(claims.user.profile["preferred_username"] == "ada")
    }
}
