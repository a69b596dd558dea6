import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

/// The verifier's promises: the algorithm is the key's, the key is the `kid`'s, a set is kept a
/// day, an unknown `kid` fetches again at most once a minute, concurrent verifications share one
/// fetch, and a failed fetch keeps the keys it had.
@Suite struct JSONWebKeySetVerifierTests {

    let es256 = JWTSigner.randomES256()
    let rs256 = JWTSigner(.rs256(.testKeyA), keyID: "rsa-a")

    @Test func verifiesTokensSignedByEachKeyOfItsSet() async {
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [es256.publicKey, rs256.publicKey]))
        #expect(await verificationError(verifier, es256.sign(claims: someClaims())) == nil)
        #expect(await verificationError(verifier, rs256.sign(claims: someClaims())) == nil)
    }

    @Test func refusesATokenWhosePayloadChangedByOneByte() async {
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [es256.publicKey, rs256.publicKey]))
        for signer in [es256, rs256] {
            let error = await verificationError(verifier, tamperedPayload(signer.sign(claims: someClaims())))
            #expect(error.flatMap(refusal) == .invalidSignature, "\(signer.algorithm)")
            #expect(error?.kind == .misconfiguration)
        }
    }

    @Test func refusesATokenSignedByAnotherKeyUnderTheSameKid() async {
        let impostor = JWTSigner(.rs256(.testKeyB), keyID: rs256.keyID)
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [rs256.publicKey]))
        let error = await verificationError(verifier, impostor.sign(claims: someClaims()))
        #expect(error.flatMap(refusal) == .invalidSignature)
    }

    @Test func theAlgorithmIsTheKeysNeverTheTokensAlone() async {
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [rs256.publicKey]))
        // HS256 with the RSA key's public bytes as the HMAC secret: never even tried.
        let hmac = rs256.sign(claims: someClaims(), extraHeader: ["alg": "HS256"])
        #expect(await verificationError(verifier, hmac).flatMap(refusal) == .unsupportedAlgorithm("HS256"))
        // `none`, any spelling: refused when the token is read.
        for none in ["none", "None", "NONE"] {
            let unsecured = rs256.sign(claims: someClaims(), extraHeader: ["alg": none])
            #expect(await verificationError(verifier, unsecured).flatMap(refusal) == .malformed("unsecured (alg none)"))
        }
        // The RSA key's kid with a claim of ES256: the key verifies RS256 only.
        let confused = es256.sign(claims: someClaims(), extraHeader: ["kid": "rsa-a"])
        #expect(
            await verificationError(verifier, confused).flatMap(refusal)
                == .keyAlgorithmMismatch(keyID: "rsa-a", keyAlgorithm: "RS256", tokenAlgorithm: "ES256")
        )
        // Other RSA algorithms are not RS256.
        for algorithm in ["RS384", "RS512", "PS256"] {
            let other = rs256.sign(claims: someClaims(), extraHeader: ["alg": algorithm])
            #expect(await verificationError(verifier, other).flatMap(refusal) == .unsupportedAlgorithm(algorithm))
        }
    }

    @Test func aKeyTheTokenCarriesOrPointsToIsNeverUsed() async {
        let attacker = JWTSigner.randomES256()
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [es256.publicKey]))
        let token = attacker.sign(
            claims: someClaims(),
            extraHeader: [
                "kid": es256.keyID!, "jwk": attacker.jwk, "jku": "https://attacker.example/keys",
                "x5u": "https://attacker.example/cert",
            ]
        )
        #expect(await verificationError(verifier, token).flatMap(refusal) == .invalidSignature)
    }

    @Test func aTokenWithoutKidIsTriedWithEveryKeyOfItsAlgorithm() async {
        let other = JWTSigner.randomES256()
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [other.publicKey, es256.publicKey]))
        let token = JWTSigner(es256.key, keyID: nil).sign(claims: someClaims())
        #expect(await verificationError(verifier, token) == nil)
        let stranger = JWTSigner(JWTSigner.randomES256().key, keyID: nil).sign(claims: someClaims())
        #expect(await verificationError(verifier, stranger).flatMap(refusal) == .invalidSignature)
    }

    @Test func aFixedSetRefusesAnUnknownKidWithoutFetching() async {
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [es256.publicKey]))
        let stranger = JWTSigner.randomES256()
        let error = await verificationError(verifier, stranger.sign(claims: someClaims()))
        #expect(error.flatMap(refusal) == .unknownSigningKey(keyID: stranger.keyID))
        #expect(error?.kind == .transient, "a key the issuer may publish soon says nothing lasting")
    }

    @Test func aFetchedSetIsKeptForADayThenFetchedAgain() async throws {
        let clock = ManualClock()
        let download = ScriptedKeySetDownload([es256])
        let verifier = download.verifier(clock: clock)
        let token = es256.sign(claims: someClaims())
        for _ in 0..<5 {
            #expect(await verificationError(verifier, token) == nil)
        }
        #expect(download.calls == 1)
        clock.advance(by: 86_400 - 1)
        #expect(await verificationError(verifier, token) == nil)
        #expect(download.calls == 1, "23 h 59 min 59 s old: still fresh")
        clock.advance(by: 1)
        download.hold()
        #expect(await verificationError(verifier, token) == nil, "a day old: verified at once with the held key")
        try await waitUntil(timeout: 300) { download.heldCount == 1 }
        #expect(download.calls == 2, "and fetched again meanwhile")
        download.release()
    }

    @Test func anUnknownKidFetchesAgainAtMostOnceAMinute() async {
        let clock = ManualClock()
        let download = ScriptedKeySetDownload([es256])
        let verifier = download.verifier(clock: clock)
        #expect(await verificationError(verifier, es256.sign(claims: someClaims())) == nil)
        #expect(download.calls == 1)

        // The issuer rotates its key a moment after the first fetch.
        let rotated = JWTSigner.randomES256()
        download.publish([rotated, es256])
        clock.advance(by: 30)
        let fresh = rotated.sign(claims: someClaims())
        let early = await verificationError(verifier, fresh)
        if case .unknownSigningKey? = early.flatMap(refusal) {
        } else {
            Issue.record("got \(String(describing: early))")
        }
        #expect(early?.kind == .transient)
        #expect(download.calls == 1, "30 s after the last fetch: not fetched again")

        // Tokens naming random keys cannot make it fetch either.
        let signed = es256.sign(claims: someClaims())
        for _ in 0..<200 {
            _ = await verificationError(verifier, replacingKid(of: signed, with: UUID().uuidString))
        }
        #expect(download.calls == 1)

        clock.advance(by: 30)
        #expect(await verificationError(verifier, fresh) == nil, "a minute after the last fetch: fetched, found")
        #expect(download.calls == 2)
        #expect(await verificationError(verifier, es256.sign(claims: someClaims())) == nil, "the old key still serves")
        #expect(download.calls == 2)
    }

    @Test func aKidStillUnknownAfterTheFetchIsRefusedWithOneFetchOnly() async {
        let clock = ManualClock()
        let download = ScriptedKeySetDownload([es256])
        let verifier = download.verifier(clock: clock)
        #expect(await verificationError(verifier, es256.sign(claims: someClaims())) == nil)
        clock.advance(by: 61)
        let error = await verificationError(verifier, JWTSigner.randomES256().sign(claims: someClaims()))
        if case .unknownSigningKey? = error.flatMap(refusal) {
        } else {
            Issue.record("got \(String(describing: error))")
        }
        #expect(download.calls == 2)
    }

    @Test func concurrentVerificationsShareOneFetch() async throws {
        let token = rs256.sign(claims: someClaims())
        for round in 0..<30 {
            let clock = ManualClock()
            let download = ScriptedKeySetDownload([rs256])
            download.hold()
            let verifier = download.verifier(clock: clock)
            let verified = ConcurrencySafeContainer(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        if await verificationError(verifier, token) == nil {
                            verified.withLock { $0 += 1 }
                        }
                    }
                }
                try await waitUntil(timeout: 300) { download.heldCount == 1 }
                // Let the other tasks reach the verifier while the fetch is held.
                for _ in 0..<16 { await Task.yield() }
                download.release()
                try await group.waitForAll()
            }
            #expect(download.calls == 1, "round \(round)")
            #expect(verified.withLock { $0 } == 16)
        }
    }

    @Test func aCancelledWaiterDoesNotCancelTheSharedFetch() async throws {
        let clock = ManualClock()
        let download = ScriptedKeySetDownload([es256])
        download.hold()
        let verifier = download.verifier(clock: clock)
        let token = es256.sign(claims: someClaims())
        let first = Task { await verificationError(verifier, token) }
        try await waitUntil(timeout: 300) { download.heldCount == 1 }
        let second = Task { await verificationError(verifier, token) }
        first.cancel()
        download.release()
        #expect(await first.value == nil, "the fetch it waited for was not cancelled")
        #expect(await second.value == nil)
        #expect(download.calls == 1)
    }

    @Test func aFailedFetchIsTransientAndRepeatedOnlyAfterFiveSeconds() async {
        let clock = ManualClock()
        let download = ScriptedKeySetDownload([es256])
        download.fail(with: RemoteAuthError(.network(code: -1009)))
        let verifier = download.verifier(clock: clock)
        let token = es256.sign(claims: someClaims())
        let error = await verificationError(verifier, token)
        #expect(error?.reason == .network(code: -1009))
        #expect(error?.kind == .transient)
        download.publish([es256])
        clock.advance(by: 4)
        #expect(await verificationError(verifier, token)?.reason == .network(code: -1009), "at once, no request")
        #expect(download.calls == 1)
        clock.advance(by: 1)
        #expect(await verificationError(verifier, token) == nil, "five seconds later: fetched again")
        #expect(download.calls == 2)
    }

    @Test func anOutageAtTheKeySetURLNeitherHammersItNorDelaysAHeldKey() async throws {
        let clock = ManualClock()
        let download = ScriptedKeySetDownload([es256])
        let verifier = download.verifier(clock: clock)
        let token = es256.sign(claims: someClaims())
        #expect(await verificationError(verifier, token) == nil)
        clock.advance(by: 2 * 86_400)
        download.fail(with: RemoteAuthError(.timedOut))
        download.hold()
        // The day-old key verifies its own token at once, while the refetch hangs.
        #expect(await verificationError(verifier, token) == nil)
        try await waitUntil(timeout: 300) { download.heldCount == 1 }
        download.release()
        try await waitUntil(timeout: 300) { !verifier.description.contains("fetching") }
        for second in 0..<20 {
            clock.advance(by: 1)
            #expect(await verificationError(verifier, token) == nil, "second \(second)")
            _ = await verificationError(verifier, replacingKid(of: token, with: UUID().uuidString))
        }
        #expect(download.calls <= 6, "one fetch per 5 s at most while the URL is down: \(download.calls)")
        // A forged token is refused, transiently while the set cannot be fetched again to confirm.
        let forged = await verificationError(verifier, tamperedPayload(token))
        #expect(forged.flatMap(refusal) == .unknownSigningKey(keyID: es256.keyID))
        #expect(forged?.kind == .transient)
        let stranger = await verificationError(verifier, JWTSigner.randomES256().sign(claims: someClaims()))
        #expect(stranger?.reason == .timedOut, "no key held for it: the fetch's failure")
    }

    @Test func aClockSetBackDoesNotHoldARotatedKeyOut() async {
        let clock = ManualClock()
        let download = ScriptedKeySetDownload([es256])
        let verifier = download.verifier(clock: clock)
        #expect(await verificationError(verifier, es256.sign(claims: someClaims())) == nil)
        clock.advance(by: -3_600)
        let rotated = JWTSigner.randomES256()
        download.publish([rotated, es256])
        #expect(await verificationError(verifier, rotated.sign(claims: someClaims())) == nil)
        #expect(download.calls == 2)
    }

    @Test func aKeySetWithAnUnusableKeyUnderTheKidNamesTheReason() async throws {
        let document = """
            {"keys": [{"kty": "RSA", "kid": "small", "n": "\(Base64URL.encode([UInt8](repeating: 0xC5, count: 128)))", "e": "AQAB"}]}
            """
        let keySet = try JSONWebKeySet(jsonData: Data(document.utf8))
        #expect(keySet.keys.isEmpty)
        #expect(keySet.skippedKeys.map(\.keyID) == ["small"])
        #expect(keySet.skippedKeys.first?.reason.contains("2048") == true)
    }

    @Test func descriptionsShowNoToken() async throws {
        let token = es256.sign(claims: someClaims())
        let signed = try JSONWebSignature(compact: token)
        let parts = token.split(separator: ".").map(String.init)
        var dumped = ""
        dump(signed, to: &dumped)
        for text in [signed.description, String(reflecting: signed), dumped] {
            #expect(!text.contains(parts[1]) && !text.contains(parts[2]))
        }
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [es256.publicKey]))
        #expect(verifier.description == "JSONWebKeySetVerifier(fixed, 1 keys)")
    }

    /// The issuer rotated to a new key that the held key fails to verify: a key named by no
    /// `kid`, or under a `kid` it reused; the set a day old, or fresh. The issuer's own token is
    /// no verdict on the held keys: the set is fetched again for it, and it verifies.
    @Test(
        arguments: [
            ("no kid", nil, 86_400 + 1), ("a reused kid", "k1", 86_400 + 1), ("no kid, a fresh set", nil, 3_600),
        ] as [(String, String?, TimeInterval)]
    )
    func aRotatedKeyTheHeldKeysFailIsFetchedFor(_ label: String, keyID: String?, age: TimeInterval) async {
        let clock = ManualClock()
        let old = JWTSigner(JWTSigner.randomES256().key, keyID: keyID)
        let rotated = JWTSigner(JWTSigner.randomES256().key, keyID: keyID)
        let download = ScriptedKeySetDownload([old])
        let verifier = download.verifier(clock: clock)
        #expect(await verificationError(verifier, old.sign(claims: someClaims())) == nil)
        download.publish([rotated])
        clock.advance(by: age)
        let error = await verificationError(verifier, rotated.sign(claims: someClaims()))
        #expect(error == nil, "\(label): got \(String(describing: error)) after \(download.calls) fetches")
    }

    /// A fetch that failed with `cancelled` (URLSessionTransport's mapping of URLError.cancelled,
    /// from a pinning delegate cancelling the TLS challenge, say) is a failed fetch: no caller that
    /// cancelled nothing is told it cancelled.
    @Test func aFetchTheTransportCancelledIsReportedAsAFailedFetch() async {
        let clock = ManualClock()
        let signer = JWTSigner.randomES256()
        let download = ScriptedKeySetDownload([signer])
        download.fail(with: RemoteAuthError(.cancelled))
        let verifier = download.verifier(clock: clock)
        _ = await verificationError(verifier, signer.sign(claims: someClaims()))
        download.publish([signer])
        clock.advance(by: 1)
        let second = await verificationError(verifier, signer.sign(claims: someClaims()))
        #expect(
            second?.reason != .cancelled,
            "a caller that did not cancel is told it cancelled: \(String(describing: second))"
        )
        #expect(download.calls == 1)
    }

    /// A fetch that hung 58 s and failed is not repeated 3 s later for an unknown kid, although the
    /// minute since its start is over: the 5-s backoff counts from its failure.
    @Test func aFailedFetchIsNotRepeatedWithinFiveSecondsForAnUnknownKid() async throws {
        let clock = ManualClock()
        let signer = JWTSigner.randomES256()
        let download = ScriptedKeySetDownload([signer])
        let verifier = download.verifier(clock: clock)
        #expect(await verificationError(verifier, signer.sign(claims: someClaims())) == nil)
        clock.advance(by: 100)
        download.fail(with: RemoteAuthError(.timedOut))
        download.hold()
        let stranger = JWTSigner.randomES256()
        let first = Task { await verificationError(verifier, stranger.sign(claims: someClaims())) }
        try await waitUntil(timeout: 300) { download.heldCount == 1 }
        clock.advance(by: 58)
        download.release()
        #expect(await first.value?.reason == .timedOut)
        clock.advance(by: 3)
        _ = await verificationError(verifier, JWTSigner.randomES256().sign(claims: someClaims()))
        #expect(download.calls == 2, "a failed fetch 3 s ago is not repeated: \(download.calls) fetches")
    }

    /// A token's parts have one spelling: the standard alphabet's `+` and `/`, padding, or unused
    /// trailing bits set would give another token string that verifies. Each is malformed.
    @Test func aRespelledTokenIsMalformed() async throws {
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [rs256.publicKey]))
        var token = rs256.sign(claims: someClaims())
        // Find a token whose signature has a "-" or "_" to re-spell (each character has a 1 in 32 chance).
        var attempt = 0
        while !token.split(separator: ".")[2].contains(where: { $0 == "-" || $0 == "_" }) {
            attempt += 1
            token = rs256.sign(claims: someClaims("user-\(attempt)"))
        }
        #expect(await verificationError(verifier, token) == nil)
        let parts = token.split(separator: ".").map(String.init)
        let standardAlphabet = parts[2]
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        // 256 bytes are 342 characters, the last with 4 unused bits; set the lowest of them.
        var lastBitSet = Array(parts[2])
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(alphabet.firstIndex(of: lastBitSet[lastBitSet.count - 1]))
        lastBitSet[lastBitSet.count - 1] = alphabet[last ^ 1]
        for (name, signature) in [
            ("the standard alphabet", standardAlphabet), ("padding", parts[2] + "=="),
            ("a trailing bit set", String(lastBitSet)),
        ] {
            #expect(signature != parts[2])
            let error = await verificationError(verifier, parts[0] + "." + parts[1] + "." + signature)
            guard case .malformed? = error.flatMap(refusal) else {
                Issue.record("\(name): got \(String(describing: error))")
                continue
            }
        }
    }

    /// A fetch in flight when a verification began may answer with the keys from before the rotation
    /// its token comes from: that is no verdict on the token.
    @Test func aFetchStartedBeforeTheVerificationIsNoVerdictOnItsToken() async throws {
        for round in 0..<3 {  // each with new keys
            let clock = ManualClock()
            let old = JWTSigner(JWTSigner.randomES256().key, keyID: "k1")
            let rotated = JWTSigner(JWTSigner.randomES256().key, keyID: "k1")
            let published = ConcurrencySafeContainer([old])
            let gate = ScriptedKeySetDownload([])
            let verifier = JSONWebKeySetVerifier(clock: clock) { () throws(RemoteAuthError) in
                // The issuer answers with the keys it has when the request arrives.
                let answer = published.withLock { $0 }
                _ = try await gate.download()
                return JSONWebKeySet(keys: answer.map(\.publicKey))
            }
            #expect(await verificationError(verifier, old.sign(claims: someClaims())) == nil)
            clock.advance(by: 86_400 + 1)
            gate.hold()
            // A day later: the old key's token verifies at once and starts a fetch of the old keys.
            #expect(await verificationError(verifier, old.sign(claims: someClaims())) == nil)
            try await waitUntil(timeout: 300) { gate.heldCount == 1 }
            // The issuer rotates, reusing the kid; a token of the new key arrives, and its
            // verification joins that fetch.
            published.withLock { $0 = [rotated] }
            let newToken = rotated.sign(claims: someClaims())
            let joiner = Task { await verificationError(verifier, newToken) }
            try await waitUntil(timeout: 300) { verifier.fetchJoins == 1 }
            gate.release()
            let error = await joiner.value
            guard case .unknownSigningKey? = error.flatMap(refusal) else {
                Issue.record("round \(round): expected a transient refusal, got \(String(describing: error))")
                return
            }
            clock.advance(by: 60)
            #expect(await verificationError(verifier, newToken) == nil, "a minute later its own fetch brings the key")
        }
    }
}
