import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// The identity token's checks, each failing on its own, at the stated leeway's boundaries, and
/// the credential's portable seam.
@Suite struct SignInWithAppleTests {

    private static let clientID = "com.example.app"
    private let clock = ManualClock()
    private let apple: SimulatedAppleIDProvider
    private let nonce = SignInWithAppleNonce()

    init() {
        apple = SimulatedAppleIDProvider(clientID: Self.clientID, clock: clock)
    }

    private func service(backend: SignInWithAppleBackend = .deviceOnly) -> SignInWithAppleService {
        SignInWithAppleService(
            clientID: Self.clientID,
            backend: backend,
            credentialStates: apple,
            revocationSignal: apple,
            signatureVerifier: JSONWebKeySetVerifier(keySet: apple.keySet),
            clock: clock
        )
    }

    private var claims: [String: any Sendable] {
        let now = Int(clock.now.timeIntervalSince1970)
        return [
            "iss": "https://appleid.apple.com", "aud": Self.clientID, "sub": "001234.abcd", "iat": now,
            "exp": now + 600, "nonce": nonce.hashed,
        ]
    }

    /// The refusal of a credential whose token has `claims` with `changes` (a `nil` value removes
    /// the claim), or `nil` when it signs in.
    private func refusal(
        _ changes: [String: (any Sendable)?] = [:],
        user: String = "001234.abcd",
        nonce: SignInWithAppleNonce? = nil
    ) async -> RemoteAuthError? {
        var claims = claims
        for (key, value) in changes {
            claims[key] = value
        }
        let credential = AppleIDCredential(
            user: user,
            identityToken: apple.signedToken(claims: claims),
            authorizationCode: "code-1"
        )
        do {
            _ = try await service().obtainTokens(with: .signInWithApple(credential, nonce: nonce ?? self.nonce))
            return nil
        } catch {
            return error
        }
    }

    @Test func aTokenThatPassesEveryCheckSignsIn() async {
        #expect(await refusal() == nil)
    }

    @Test func eachClaimCheckFailsOnItsOwn() async {
        let cases: [(String, [String: (any Sendable)?], IDTokenValidationError)] = [
            (
                "issuer", ["iss": "https://appleid.apple.com.evil.example"],
                .issuerMismatch(expected: "https://appleid.apple.com", actual: "https://appleid.apple.com.evil.example")
            ),
            (
                "audience", ["aud": "com.example.other"],
                .audienceMismatch(expected: Self.clientID, actual: ["com.example.other"])
            ),
            (
                "expired", ["exp": Int(clock.now.timeIntervalSince1970) - 60],
                .expired(at: clock.now.addingTimeInterval(-60))
            ),
            ("nonce", ["nonce": SignInWithAppleNonce().hashed], .nonceMismatch),
            ("no nonce", ["nonce": nil], .nonceMismatch),
            ("raw nonce in the token", ["nonce": nonce.raw], .nonceMismatch),
            ("no subject", ["sub": nil], .missingClaim("sub")),
        ]
        for (name, changes, expected) in cases {
            let error = await refusal(changes)
            #expect(error?.reason == .invalidIDToken(expected), "\(name)")
        }
        let otherUser = await refusal(user: "009999.other")
        #expect(otherUser?.reason == .invalidIDToken(.subjectMismatch(expected: "009999.other", actual: "001234.abcd")))
    }

    @Test func theLeewayIsSixtySecondsAtEachBoundary() async {
        let now = Int(clock.now.timeIntervalSince1970)
        #expect(await refusal(["exp": now - 59]) == nil, "expired 59 s ago: within the leeway")
        #expect(await refusal(["exp": now - 60]) != nil, "expired 60 s ago: refused")
        #expect(await refusal(["iat": now + 60]) == nil, "issued 60 s ahead of this clock: within the leeway")
        #expect(
            await refusal(["iat": now + 61])?.reason
                == .invalidIDToken(.issuedInFuture(at: clock.now.addingTimeInterval(61)))
        )
    }

    @Test func aTokenSignedByAnotherKeyOrChangedIsRefused() async throws {
        let stranger = SimulatedAppleIDProvider(clientID: Self.clientID, clock: clock)
        let forged = stranger.authorize(.init(userID: "001234.abcd"), nonce: nonce.hashed)
        await #expect(throws: RemoteAuthError.self) {
            try await service().obtainTokens(with: .signInWithApple(forged, nonce: nonce))
        }
        var changed = apple.authorize(.init(userID: "001234.abcd"), nonce: nonce.hashed)
        changed.identityToken = tamperedPayload(changed.identityToken!, replacing: "001234.abcd", with: "001234.abce")
        changed.user = "001234.abce"
        do {
            _ = try await service().obtainTokens(with: .signInWithApple(changed, nonce: nonce))
            Issue.record("a changed token signed in")
        } catch {
            #expect(error.reason == .invalidIDToken(.invalidSignature))
        }
    }

    @Test func theNonceIsTheSHA256OfTheRawValueInHex() {
        #expect(
            SignInWithAppleNonce(raw: "abc").hashed
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        let nonces = Set((0..<100).map { _ in SignInWithAppleNonce().raw })
        #expect(nonces.count == 100)
        #expect(nonces.allSatisfy { $0.utf8.count == 43 })
        let nonce = SignInWithAppleNonce()
        #expect(!nonce.description.contains(nonce.raw) && !String(reflecting: nonce).contains(nonce.raw))
    }

    @Test func theDeviceOnlySessionIsTheUserWithoutARefreshToken() async throws {
        let credential = apple.authorize(
            .init(userID: "001234.abcd", givenName: "Ada", familyName: "Lovelace", email: "ada@example.com"),
            nonce: nonce.hashed
        )
        let tokens = try await service().obtainTokens(with: .signInWithApple(credential, nonce: nonce))
        #expect(tokens.refreshToken == nil)
        #expect(tokens.accessToken == credential.identityToken)
        #expect(tokens.expiresIn == SignInWithAppleService.deviceOnlySessionLifetime)
        #expect(tokens.user?.identifier == "001234.abcd")
        #expect(tokens.user?.name == "Ada Lovelace")
        #expect(tokens.user?.email == "ada@example.com")
        #expect(tokens.user?.profile[SignInWithAppleService.appleUserIDProfileKey] == "001234.abcd")
    }

    @Test func theBackendReceivesTheCheckedAuthorizationAndNamesTheUser() async throws {
        let received = ConcurrencySafeContainer<AppleIDAuthorization?>(nil)
        let apple = apple
        let backend = SignInWithAppleBackend.exchange(
            { authorization in
                received.withLock { $0 = authorization }
                _ = try apple.redeem(authorizationCode: authorization.authorizationCode)
                return IssuedTokens(
                    accessToken: "backend-at",
                    refreshToken: "backend-rt",
                    expiresIn: 900,
                    user: ManagedUser(identifier: "backend-user-7")
                )
            },
            deleteAccount: { _ in }
        )
        let credential = apple.authorize(
            .init(userID: "001234.abcd", givenName: "Ada", email: "a@b.c"),
            nonce: nonce.hashed
        )
        let tokens = try await service(backend: backend).obtainTokens(with: .signInWithApple(credential, nonce: nonce))
        #expect(tokens.accessToken == "backend-at" && tokens.refreshToken == "backend-rt")
        #expect(tokens.user?.identifier == "backend-user-7", "the backend names the user")
        #expect(tokens.user?.name == "Ada" && tokens.user?.email == "a@b.c", "filled from Apple's")
        #expect(tokens.user?.profile[SignInWithAppleService.appleUserIDProfileKey] == "001234.abcd")
        let authorization = try #require(received.withLock { $0 })
        #expect(authorization.identityToken == credential.identityToken)
        #expect(authorization.authorizationCode == credential.authorizationCode)
        #expect(authorization.claims.subject == "001234.abcd")
        #expect(apple.redeemedCodeCount == 1)
        // The code is single use: a second exchange of the same credential is refused by Apple.
        do {
            _ = try await service(backend: backend).obtainTokens(with: .signInWithApple(credential, nonce: nonce))
            Issue.record("a used code was redeemed again")
        } catch {
            #expect(error.serverCode == "invalid_grant")
        }
    }

    @Test func aBackendsUnclassifiedErrorNeverEndsASession() {
        struct Oops: Error {}
        #expect(SignInWithAppleBackend.remoteError(Oops()).kind == .transient)
        #expect(SignInWithAppleBackend.remoteError(URLError(.notConnectedToInternet)).reason == .network(code: -1009))
        #expect(SignInWithAppleBackend.remoteError(URLError(.timedOut)).reason == .timedOut)
        #expect(SignInWithAppleBackend.remoteError(CancellationError()).reason == .cancelled)
        let terminal = RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400)
        #expect(SignInWithAppleBackend.remoteError(terminal) == terminal)
    }

    @Test func anotherGrantOrAMissingTokenIsRefused() async {
        await #expect(throws: RemoteAuthError.self) {
            try await service().obtainTokens(with: .password(username: "a", password: "b"))
        }
        let empty = AppleIDCredential(user: "001234.abcd", identityToken: nil, authorizationCode: "c")
        do {
            _ = try await service().obtainTokens(with: .signInWithApple(empty, nonce: nonce))
        } catch {
            #expect(error.reason == .invalidIDToken(.malformed("the credential has no identity token")))
        }
    }

    @Test func theRawCredentialFieldsAreDecodedAsAppleGivesThem() {
        var later = PersonNameComponents()
        later.givenName = ""
        let decoded = AppleIDCredential(
            user: "001234.abcd",
            identityTokenData: Data([0xFF, 0xFE]),
            authorizationCodeData: Data("c123".utf8),
            fullName: later,
            email: "",
            realUserStatusRawValue: 2,
            state: "s"
        )
        #expect(decoded.identityToken == nil, "bytes that are not UTF-8 are no token")
        #expect(decoded.authorizationCode == "c123")
        #expect(decoded.fullName == nil, "a later sign-in's empty name is no name")
        #expect(decoded.email == nil)
        #expect(decoded.realUserStatus == .likelyReal)
        #expect(decoded.state == "s")
        for (raw, status) in [
            (0, AppleIDCredential.RealUserStatus.unsupported), (1, .unknown), (2, .likelyReal), (9, .unknown),
        ] {
            #expect(AppleIDCredential.RealUserStatus(detectionStatusRawValue: raw) == status)
        }
        var first = PersonNameComponents()
        first.givenName = "Ada"
        first.familyName = ""
        let named = AppleIDCredential(
            user: "u",
            identityTokenData: nil,
            authorizationCodeData: Data(),
            fullName: first,
            email: "a@b.c",
            realUserStatusRawValue: 0,
            state: nil
        )
        #expect(named.fullName?.givenName == "Ada" && named.fullName?.familyName == nil)
        #expect(named.authorizationCode == nil)
    }

    @Test func theUserAndTheClaimsShowNoPersonalDataEither() async throws {
        let captured = ConcurrencySafeContainer<AppleIDAuthorization?>(nil)
        let backend = SignInWithAppleBackend.exchange(
            { authorization in
                captured.withLock { $0 = authorization }
                return IssuedTokens(accessToken: "at-1234567890abcdef", expiresIn: 3600)
            },
            deleteAccount: { _ in }
        )
        let credential = apple.authorize(
            .init(userID: "001234.abcd", givenName: "Ada", familyName: "Lovelace", email: "ada@example.com"),
            nonce: nonce.hashed
        )
        let tokens = try await service(backend: backend).obtainTokens(with: .signInWithApple(credential, nonce: nonce))
        let authorization = try #require(captured.withLock { $0 })
        let user = try #require(tokens.user)
        var renderings = ["\(user)", String(reflecting: user), "\(authorization.claims)", "\(authorization)"]
        for value in [user as Any, authorization.claims, authorization, tokens] {
            var dumped = ""
            dump(value, to: &dumped)
            renderings.append(dumped)
        }
        for text in renderings {
            for secret in ["Ada", "Lovelace", "ada@example.com", nonce.hashed, credential.identityToken!] {
                #expect(!text.contains(secret), "\(text) shows \(secret)")
            }
        }
        #expect(user.name == "Ada Lovelace", "the fields are there, only not shown")
    }

    @Test func aCredentialNeverShowsItsTokenCodeNameOrEmail() {
        let credential = apple.authorize(
            .init(userID: "001234.abcd", givenName: "Ada", familyName: "Lovelace", email: "ada@example.com"),
            nonce: nonce.hashed
        )
        var dumped = ""
        dump(credential, to: &dumped)
        let grant = AuthGrant.signInWithApple(credential, nonce: nonce)
        var dumpedGrant = ""
        dump(grant, to: &dumpedGrant)
        for text in [credential.description, String(reflecting: credential), dumped, grant.description, dumpedGrant] {
            for secret in [
                credential.identityToken!, credential.authorizationCode!, "Ada", "Lovelace", "ada@example.com",
                nonce.raw,
            ] {
                #expect(!text.contains(secret), "\(text) shows \(secret)")
            }
        }
    }
}
