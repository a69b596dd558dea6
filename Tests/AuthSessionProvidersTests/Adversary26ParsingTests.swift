import AuthSessionInterface
import Foundation
import Testing

@testable import AuthSessionProviders

// Adversary review 26: JWS headers and claims (promises 8 and 10), the redactor's exact layer
// (promise 9). Every token here is built by hand; nothing is signed.

private func b64url(_ data: Data) -> String {
    data.base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

private func compact(header: Data, payload: Data = Data(#"{"sub":"ada"}"#.utf8)) -> String {
    "\(b64url(header)).\(b64url(payload)).\(b64url(Data([1, 2, 3, 4])))"
}

/// `text` in UTF-16 little-endian with a byte-order mark: RFC 8259 §8.1 says JSON text exchanged
/// between systems is UTF-8, but Foundation's JSONDecoder reads UTF-16 and UTF-32 too.
private func utf16LE(_ text: String) -> Data {
    var data = Data([0xFF, 0xFE])
    for unit in text.utf16 {
        data.append(UInt8(unit & 0xFF))
        data.append(UInt8(unit >> 8))
    }
    return data
}

private func utf32LE(_ text: String) -> Data {
    var data = Data([0xFF, 0xFE, 0x00, 0x00])
    for scalar in text.unicodeScalars {
        var value = scalar.value.littleEndian
        withUnsafeBytes(of: &value) { data.append(contentsOf: $0) }
    }
    return data
}

@Suite("Adversary26 duplicate members (promise 10)")
struct Adversary26DuplicateMemberTests {

    /// Sanity: what JSONDecoder does with a UTF-16 header (the attack below needs it to decode).
    @Test func utf16HeaderIsReadByTheDecoder() throws {
        let header = utf16LE(#"{"alg":"RS256","kid":"k1"}"#)
        let jws = try? JSONWebSignature(compact: compact(header: header))
        // Record, not require: if the decoder refuses UTF-16, the attacks below pass trivially.
        if let jws { #expect(jws.algorithm == "RS256") }
    }

    /// A duplicate `alg` spelled with an escape, in a UTF-16 header: the duplicate scanner reads
    /// bytes as if they were UTF-8, so `\u0067` (with NULs between its bytes) is not read as `g`.
    @Test func escapedDuplicateAlgInUTF16HeaderIsRefused() {
        let header = utf16LE(#"{"alg":"RS256","kid":"k1","al\u0067":"ES256"}"#)
        #expect(throws: IDTokenValidationError.self) {
            let jws = try JSONWebSignature(compact: compact(header: header))
            Issue.record("accepted a header naming alg twice; read alg = \(jws.algorithm)")
        }
    }

    @Test func escapedDuplicateKidInUTF32HeaderIsRefused() {
        let header = utf32LE(#"{"alg":"RS256","kid":"k1","\u006bid":"k2"}"#)
        #expect(throws: IDTokenValidationError.self) {
            let jws = try JSONWebSignature(compact: compact(header: header))
            Issue.record("accepted a header naming kid twice; read kid = \(jws.keyID ?? "nil")")
        }
    }

    /// The claims set, same trick: `sub` twice, the second escaped, in UTF-16.
    @Test func escapedDuplicateSubInUTF16ClaimsIsRefused() {
        let header = Data(#"{"alg":"RS256"}"#.utf8)
        let payload = utf16LE(
            #"{"iss":"https://issuer.example","aud":"client","exp":9999999999,"iat":1,"sub":"ada","su\u0062":"mallory"}"#
        )
        #expect(throws: IDTokenValidationError.self) {
            let claims = try IDTokenClaims(parsing: compact(header: header, payload: payload))
            Issue.record("accepted claims naming sub twice; read \(claims)")
        }
    }

    /// Controls in UTF-8: nested and escaped duplicates.
    @Test(arguments: [
        #"{"alg":"RS256","x":[{"a":1,"\u0061":2}]}"#,
        #"{"alg":"RS256","x":{"y":[[{"b":1,"b":2}]]}}"#,
        #"{"alg":"RS256","\ud83d\ude00":1,"😀":2}"#,
        #"{"alg":"RS256","a\/b":1,"a/b":2}"#,
        #"{"alg":"RS256","alg":"RS256"}"#,
    ])
    func utf8DuplicatesAreRefused(_ json: String) {
        #expect(throws: IDTokenValidationError.self) {
            _ = try JSONWebSignature(compact: compact(header: Data(json.utf8)))
        }
    }

    /// Two names that are different code points but one Swift `String` (canonically equivalent):
    /// RFC 8259 counts two members; `[String: JSONValue]` keeps one, silently. Arguable: the spec
    /// compares code units, so this is not a "duplicate" by the letter, but the reader then sees
    /// one value where another parser sees two.
    @Test func canonicallyEquivalentNamesAreNotSilentlyMerged() throws {
        let json = "{\"alg\":\"RS256\",\"caf\\u00e9\":\"one\",\"cafe\\u0301\":\"two\"}"
        do {
            _ = try JSONWebSignature(compact: compact(header: Data(json.utf8)))
            // Accepted: show that the decoded object has one member for two.
            let object = try JSONValue.decode(Data(json.utf8)).objectValue ?? [:]
            #expect(object.count == 3, "the decoded header has \(object.count) members for 3 in the text")
        } catch {
            // Refused: fine.
        }
    }
}

@Suite("Adversary26 header values never echoed (promise 8)")
struct Adversary26HeaderEchoTests {

    static let secret = "SeCrEtHeAdErVaLuE-9f86d081884c7d65"

    private func renderings(_ error: any Error) -> [String] {
        var dumped = ""
        dump(error, to: &dumped)
        return [
            "\(error)", String(reflecting: error), dumped, error.localizedDescription,
            (error as NSError).localizedDescription, (error as NSError).description,
        ]
    }

    @Test(arguments: [
        #"{"alg":"SECRET"}"#,
        #"{"alg":"RS256","kid":SECRETNUM}"#,
        #"{"alg":"RS256","kid":{"x":"SECRET"}}"#,
        #"{"alg":["SECRET"]}"#,
        #"{"alg":"RS256","crit":["SECRET"]}"#,
        #"{"alg":"SECRET","alg":"SECRET"}"#,
        #"{"alg":"SECRET""#,
    ])
    func parseErrorsDoNotEcho(_ template: String) {
        let json = template.replacingOccurrences(of: "SECRETNUM", with: "1234567890123456789012345")
            .replacingOccurrences(of: "SECRET", with: Self.secret)
        do {
            let jws = try JSONWebSignature(compact: compact(header: Data(json.utf8)))
            var dumped = ""
            dump(jws, to: &dumped)
            for text in ["\(jws)", String(reflecting: jws), dumped] {
                #expect(!text.contains(Self.secret), "\(text)")
                #expect(!text.contains("1234567890123456789012345"), "\(text)")
            }
        } catch {
            for text in renderings(error) {
                #expect(!text.contains(Self.secret), "\(text)")
                #expect(!text.contains("1234567890123456789012345"), "\(text)")
            }
        }
    }

    @Test func verificationErrorsDoNotEcho() {
        let errors: [any Error] = [
            IDTokenValidationError.unsupportedAlgorithm(Self.secret),
            IDTokenValidationError.unknownSigningKey(keyID: Self.secret),
            IDTokenValidationError.keyAlgorithmMismatch(
                keyID: Self.secret,
                keyAlgorithm: "RS256",
                tokenAlgorithm: Self.secret
            ),
            RemoteAuthError(.invalidIDToken(.unsupportedAlgorithm(Self.secret))),
            RemoteAuthError(.invalidIDToken(.unknownSigningKey(keyID: Self.secret))),
            ManagedSessionError.remote(RemoteAuthError(.invalidIDToken(.unknownSigningKey(keyID: Self.secret)))),
        ]
        for error in errors {
            for text in renderings(error) {
                #expect(!text.contains(Self.secret), "\(text)")
                #expect(!text.contains("SeCrEt"), "\(text)")
            }
        }
    }
}

@Suite("Adversary26 redactor exact layer (promise 9)")
struct Adversary26RedactorTests {

    /// Two registrations whose bytes differ but which Swift's `String` holds equal (canonical
    /// equivalence): the registry is a `[String: Int]`, so the second is folded into the first and
    /// only the first's bytes are ever matched. "Matched byte for byte", the exact layer misses a
    /// registered secret.
    @Test func canonicallyEquivalentSecretsAreBothRedacted() {
        let decomposed = "tok-adv26-e\u{301}-\(UUID().uuidString)"
        let precomposed = decomposed.replacingOccurrences(of: "e\u{301}", with: "\u{e9}")
        #expect(Array(decomposed.utf8) != Array(precomposed.utf8))
        let first = SecretRedactor.register(decomposed)
        let second = SecretRedactor.register(precomposed)
        defer {
            first.cancel()
            second.cancel()
        }
        let raw = SecretRedactor.redact("token=\(precomposed) end")
        #expect(!raw.utf8.elementsEqual("token=\(precomposed) end".utf8) || !raw.contains("adv26"))
        #expect(!Array(raw.utf8).contains(subsequence: Array(precomposed.utf8)), "\(raw)")
        let json = SecretRedactor.redact(
            "{\"x\":\"\(precomposed.replacingOccurrences(of: "\u{e9}", with: "\\u00e9"))\"}"
        )
        #expect(!json.contains(String(precomposed.suffix(36))), "\(json)")
    }

    /// After the first registration ends, the second (still live) must still be redacted.
    @Test func secondEquivalentRegistrationOutlivesTheFirst() {
        let decomposed = "tok-adv26b-e\u{301}-\(UUID().uuidString)"
        let precomposed = decomposed.replacingOccurrences(of: "e\u{301}", with: "\u{e9}")
        let first = SecretRedactor.register(precomposed)
        let second = SecretRedactor.register(decomposed)
        first.cancel()
        defer { second.cancel() }
        let out = SecretRedactor.redact("x \(decomposed) y")
        #expect(!out.contains(String(decomposed.suffix(36))), "\(out)")
    }

    /// Escaped forms of a base64 secret with every JSON escape the layer names.
    @Test(arguments: [
        #"a\/b+c\u003dd\u002Fe\u002bf"#,  // \/ and \u in both cases
        #"\u0061\/b+c=d\/e+f"#,
    ])
    func jsonEscapedBase64Secret(_ escapedTail: String) {
        let secret = "a/b+c=d/e+f-\(UUID().uuidString.prefix(8))"
        let registration = SecretRedactor.register(secret)
        defer { registration.cancel() }
        let suffix = String(secret.suffix(9))
        let text = "{\"refresh\":\"\(escapedTail)\(suffix)\"}"
        let out = SecretRedactor.redact(text)
        #expect(!out.contains(suffix), "\(out)")
    }

    /// A secret with a quote and a backslash, JSON-escaped once (promised) and nested twice (JSON
    /// in a JSON string, as an error body quoting another service's body would; not promised by
    /// the letter).
    @Test func quoteAndBackslashEscapedOnceAndTwice() {
        let secret = "Zq\"8\\kP-\(UUID().uuidString.prefix(8))"
        let registration = SecretRedactor.register(secret)
        defer { registration.cancel() }
        let tail = String(secret.suffix(8))
        let once = "Zq\\\"8\\\\kP-\(tail)"
        let outOnce = SecretRedactor.redact("{\"e\":\"\(once)\"}")
        #expect(!outOnce.contains(tail), "once: \(outOnce)")
        let twice = "Zq\\\\\\\"8\\\\\\\\kP-\(tail)"
        let outTwice = SecretRedactor.redact("{\"e\":\"{\\\"t\\\":\\\"\(twice)\\\"}\"}")
        withKnownIssue("double JSON escaping is not in the promise's list; recorded only") {
            #expect(!outTwice.contains(tail), "twice: \(outTwice)")
        }
    }

    /// Astral characters: surrogate pairs in either case, and a pair split by the registry's
    /// longest-first order against a shorter secret that is its prefix.
    @Test func surrogatePairsBothCases() {
        let secret = "emoji-😀-secret-\(UUID().uuidString.prefix(8))"
        let registration = SecretRedactor.register(secret)
        defer { registration.cancel() }
        let tail = String(secret.suffix(8))
        for pair in [#"\ud83d\ude00"#, #"\uD83D\uDE00"#, #"\uD83d\uDe00"#] {
            let out = SecretRedactor.redact("\"emoji-\(pair)-secret-\(tail)\"")
            #expect(!out.contains(tail), "\(pair): \(out)")
        }
    }
}

extension Array where Element: Equatable {
    fileprivate func contains(subsequence: [Element]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        for start in 0...(count - subsequence.count)
        where Array(self[start..<(start + subsequence.count)]) == subsequence {
            return true
        }
        return false
    }
}
