import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ID-token signatures against the real server: its tokens verify with the keys it publishes at
/// its `jwks_uri`, forgeries of them do not, and a key rotation at the server is picked up by the
/// same client object once the verifier may fetch the keys again.
///
/// The rotation restarts the shared server (`rotate-key`, about a second of refused
/// connections): like the fault tests' restart, it relies on `RealServerTests` running its tests
/// one at a time. It keeps the old key published, so the tests after it are not affected.
extension RealServerTests {
    @Suite struct IDTokenSignatureIntegrationTests {

        @Test func theServersIDTokensVerifyWithItsPublishedKeys() async throws {
            try await withSafetyNet(120) {
                let server = try RealServer.require()
                let jwks = try ServerSigningKeys.jwksURL()
                let service = try await ServerSigningKeys.discoveredService(
                    role: "password",
                    scope: ["openid", "profile", "email", "read"]
                )
                #expect(service.configuration.jwksURI == jwks, "discovery took the metadata's jwks_uri")
                let discoveredVerifier = try #require(service.signatureVerifier as? JSONWebKeySetVerifier)

                // django-oauth-toolkit's password grant has no ID token and its refresh has one;
                // Glewlwyd's the other way round. Either is returned only once verified.
                let signedIn = try await RealServer.signIn(service)
                let refreshed = try await service.refresh(try #require(signedIn.refreshToken), scope: nil)
                let answer = server.kind == .glewlwyd ? signedIn : refreshed
                let idToken = try #require(answer.idToken, "the ID token was refused")
                if server.kind == .djangoOAuthToolkit {
                    #expect(refreshed.user?.identifier == "1")
                }
                #expect(answer.user?.email == server.user.email)

                // Its header names one of the published keys, whose kid is the key's thumbprint.
                let signed = try JSONWebSignature(compact: idToken)
                #expect(signed.algorithm == "RS256")
                let published = try await ServerSigningKeys.published()
                let keyID = try #require(signed.keyID, "the server's ID tokens name their key")
                #expect(published.contains { $0.keyID == keyID })
                for key in published where server.kind == .djangoOAuthToolkit {
                    // Glewlwyd's kid is a SHA-256 of the key's DER form, not RFC 7638's thumbprint:
                    // nothing here depends on how a kid is made.
                    #expect(key.keyID == key.thumbprint, "kid is the RFC 7638 thumbprint")
                    #expect(key.algorithm == "RS256")
                }
                #expect(discoveredVerifier.keySet?.keys.map(\.keyID) == published.map(\.keyID))
                #expect(discoveredVerifier.keySet?.skippedKeys == [])

                // A verifier of its own, on the same URL, verifies it too.
                let direct = JSONWebKeySetVerifier(jwksURI: jwks)
                try await direct.verifySignature(of: signed)

                // The code flow's ID token is verified at sign-in, where any failure throws.
                let codeFlow = try await ServerSigningKeys.discoveredService(
                    role: "authorizationCode",
                    scope: ["openid", "profile", "email"]
                )
                let browser = ScriptedBrowser(server: server, requestTimeout: 10)
                try await browser.signIn()
                let request = try codeFlow.authorizationRequest(
                    redirectURI: URL(string: "http://127.0.0.1:8124/callback")!
                )
                let grant = try request.grant(fromRedirect: try await browser.redirect(from: request.url))
                let tokens = try await codeFlow.obtainTokens(with: grant)
                let signInToken = try #require(tokens.idToken)
                #expect(try ServerSigningKeys.keyID(of: signInToken) == keyID)
                #expect(tokens.user?.identifier == (server.kind == .glewlwyd ? answer.user?.identifier : "1"))

                try IDTokenSignatureReport.record(
                    "verified",
                    "the server's RS256 ID tokens (refresh and code flow) verify with its JWKS "
                        + "(\(published.count) published, each kid its RFC 7638 thumbprint)"
                )
            }
        }

        @Test func forgedIDTokensAreRefused() async throws {
            try await withSafetyNet(120) {
                let jwks = try ServerSigningKeys.jwksURL()
                let service = try await ServerSigningKeys.discoveredService(
                    role: "password",
                    scope: ["openid", "read"]
                )
                let signedIn = try await RealServer.signIn(service)
                let refreshed = try await service.refresh(try #require(signedIn.refreshToken), scope: nil)
                let real = try #require(refreshed.idToken ?? signedIn.idToken)
                let keyID = try #require(try ServerSigningKeys.keyID(of: real))
                let serverKey = try #require(try await ServerSigningKeys.published().first { $0.keyID == keyID })
                let secret = Array(serverKey.canonicalJSON.utf8)

                let forgeries = [
                    Forgery("one payload byte changed", .invalidSignature, IDTokenForgery.oneByteChanged),
                    Forgery("re-signed by another key", .invalidSignature, IDTokenForgery.resignedWithTestKey),
                    Forgery("HS256 with the server's kid", .unsupportedAlgorithm("HS256")) {
                        try IDTokenForgery.hs256($0, secret: secret)
                    },
                ]

                // Straight to a verifier of the server's key set: the real token passes, no forgery
                // does. (No throttle: keys that fail a token are a verdict once the set was fetched
                // for it, and this verifier may fetch it for each.)
                let verifier = JSONWebKeySetVerifier(jwksURI: jwks, minimumRefetchInterval: 0)
                try await verifier.verifySignature(of: JSONWebSignature(compact: real))
                for forgery in forgeries {
                    let forged = try forgery.forge(real)
                    #expect(try ServerSigningKeys.keyID(of: forged) == keyID)
                    let error = await #expect(throws: RemoteAuthError.self, "\(forgery.name)") {
                        try await verifier.verifySignature(of: JSONWebSignature(compact: forged))
                    }
                    #expect(error?.reason == .invalidIDToken(forgery.refusal), "\(forgery.name)")
                    #expect(error?.kind != .transient, "\(forgery.name): a definitive refusal")
                }

                // Through the client: the server's real answer, its ID token forged on the way. A
                // signature the keys fetched for it do not verify fails the refresh, although the
                // server has rotated the refresh token; an algorithm the client does not verify
                // cannot be checked, so the refresh keeps its tokens without that ID token.
                for forgery in forgeries where RealServer.kind == .glewlwyd {
                    // Glewlwyd's refreshes carry no ID token; its sign-ins do, where any ID token
                    // that cannot be verified fails the sign-in (nothing is spent by refusing it).
                    let transport = WatchingTransport(jwksURL: jwks, forge: forgery.forge)
                    let forgedService = try await ServerSigningKeys.discoveredService(
                        role: "password",
                        scope: ["openid", "read"],
                        transport: transport
                    )
                    let error = await #expect(throws: RemoteAuthError.self, "\(forgery.name)") {
                        try await RealServer.signIn(forgedService)
                    }
                    #expect(error?.reason == .invalidIDToken(forgery.refusal), "\(forgery.name)")
                    #expect(error?.kind != .transient, "\(forgery.name)")
                }
                for forgery in forgeries where RealServer.kind == .djangoOAuthToolkit {
                    let transport = WatchingTransport(jwksURL: jwks, forge: forgery.forge)
                    let forgedService = try await ServerSigningKeys.discoveredService(
                        role: "password",
                        scope: ["openid", "read"],
                        transport: transport
                    )
                    let refreshToken = try #require(try await RealServer.signIn(forgedService).refreshToken)
                    if forgery.refusal == .invalidSignature {
                        let error = await #expect(throws: RemoteAuthError.self, "\(forgery.name)") {
                            try await forgedService.refresh(refreshToken, scope: nil)
                        }
                        #expect(error?.reason == .invalidIDToken(forgery.refusal), "\(forgery.name)")
                        #expect(error?.kind != .transient, "\(forgery.name)")
                    } else {
                        let kept = try await forgedService.refresh(refreshToken, scope: nil)
                        #expect(kept.idToken == nil && kept.user == nil, "\(forgery.name): the ID token is dropped")
                        #expect(kept.unverifiedSubject == "1", "\(forgery.name): its subject only, to compare")
                    }
                    #expect(transport.issuedIDTokens.count == 1, "the server did issue a real ID token")
                    #expect(
                        try RealServer.tokenRequests().filter { $0.refreshTokenSHA256 == logDigest(refreshToken) }
                            .map(\.status) == [200],
                        "the refusal came after the server rotated the refresh token"
                    )
                }

                try IDTokenSignatureReport.record(
                    "forged",
                    "one payload byte changed: refused (invalidSignature); re-signed by another key: refused "
                        + "(invalidSignature); HS256 with the server's kid: refused (unsupportedAlgorithm); through "
                        + "the client's refresh the two forged signatures fail it, the HS256 token is dropped"
                )
            }
        }

        /// One client object across a key rotation at the server. The verifier's cache runs on a
        /// manual clock, the service's ID-token time checks on the system clock.
        @Test(.enabled(if: RealServer.supports(.signingKeyRotation), RealServer.lacking(.signingKeyRotation)))
        func aKeyRotationIsPickedUpByTheSameClient() async throws {
            try await withSafetyNet(120) {
                let wall = ContinuousClock()
                let started = wall.now
                let jwks = try ServerSigningKeys.jwksURL()
                let transport = WatchingTransport(jwksURL: jwks)
                let keyClock = ManualClock()
                let verifier = JSONWebKeySetVerifier(jwksURI: jwks, transport: transport, clock: keyClock)
                #expect(verifier.minimumRefetchInterval == 60)
                let service = try await ServerSigningKeys.discoveredService(
                    role: "password",
                    scope: ["openid", "read"],
                    transport: transport,
                    signatureVerifier: verifier
                )
                #expect((service.signatureVerifier as? JSONWebKeySetVerifier) === verifier)

                // Before: an ID token signed with key A, verified after the first fetch.
                let signedIn = try await RealServer.signIn(service)
                let before = try await service.refresh(try #require(signedIn.refreshToken), scope: nil)
                let tokenA = try #require(before.idToken)
                let kidA = try #require(try ServerSigningKeys.keyID(of: tokenA))
                #expect(transport.keySetFetches == 1)

                // The server gets key B and restarts; A stays published.
                let rotationStarted = wall.now
                let rotation = try await ManagerWorker.onOwnThread { try ServerScript.rotateKey(keepOld: true) }
                let rotationTook = rotationStarted.duration(to: wall.now)
                let kidB = rotation.activeKid
                #expect(kidB != kidA)
                #expect(rotation.publishedKids.first == kidB)
                #expect(rotation.publishedKids.contains(kidA), "--keep-old keeps A published")

                // Inside the minute since the fetch: the refresh keeps its new tokens, without the
                // ID token (kid B) the verifier may not fetch the keys for yet.
                let throttled = try await service.refresh(try #require(before.refreshToken), scope: nil)
                let issuedB = try #require(transport.issuedIDTokens.last)
                #expect(try ServerSigningKeys.keyID(of: issuedB) == kidB)
                #expect(throttled.idToken == nil)
                #expect(throttled.user == nil)
                #expect(throttled.unverifiedSubject == "1", "the subject only, unverified, for the user check")
                #expect(!throttled.accessToken.isEmpty)
                #expect(throttled.refreshToken != nil && throttled.refreshToken != before.refreshToken)
                #expect(transport.keySetFetches == 1, "no fetch inside the minute")
                let refusal = await #expect(throws: RemoteAuthError.self) {
                    try await verifier.verifySignature(of: JSONWebSignature(compact: issuedB))
                }
                #expect(refusal?.reason == .invalidIDToken(.unknownSigningKey(keyID: kidB)))
                #expect(refusal?.kind == .transient)

                // Past the minute on the verifier's clock: the same client fetches once and verifies B.
                keyClock.advance(by: 61)
                let after = try await service.refresh(try #require(throttled.refreshToken), scope: nil)
                let tokenB = try #require(after.idToken, "kid B was not picked up")
                #expect(try ServerSigningKeys.keyID(of: tokenB) == kidB)
                #expect(after.user?.identifier == "1")
                #expect(transport.keySetFetches == 2)
                #expect(verifier.keySet?.keys.compactMap(\.keyID) == rotation.publishedKids)

                // The token from before the rotation still verifies, from the set held.
                try await verifier.verifySignature(of: JSONWebSignature(compact: tokenA))
                #expect(transport.keySetFetches == 2, "exactly two key-set fetches")

                let total = started.duration(to: wall.now)
                let fetches = transport.keySetFetches
                try IDTokenSignatureReport.record(
                    "rotation",
                    "kid \(kidA.prefix(8))… (A) → kid \(kidB.prefix(8))… (B) picked up by the same client after "
                        + "\(fetches - 1) refetch; \(fetches) key-set fetches; the refresh inside the minute kept its "
                        + "tokens without the ID token; a kid-A token still verifies (kept); "
                        + "rotate-key \(rotationTook.secondsText), test \(total.secondsText)"
                )
            }
        }
    }
}

/// A way to forge a real ID token, and the refusal it must meet.
private struct Forgery: Sendable {
    var name: String
    var refusal: IDTokenValidationError
    var forge: @Sendable (String) throws -> String

    init(_ name: String, _ refusal: IDTokenValidationError, _ forge: @escaping @Sendable (String) throws -> String) {
        self.name = name
        self.refusal = refusal
        self.forge = forge
    }
}

extension Duration {
    /// Seconds with one decimal, e.g. `1.1 s`.
    fileprivate var secondsText: String {
        let (seconds, attoseconds) = components
        return String(format: "%.1f s", Double(seconds) + Double(attoseconds) / 1e18)
    }
}
