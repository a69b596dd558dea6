import AuthSessionJOSE
import Foundation
import Testing

/// Promise 4: `JSONWebSignature(compact:)` and `CompactSerialization`.
@Suite(
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "pure parsing, thousands of cases: plain swift test runs it; under TSan it would only starve the tests whose subject is timing"
    )
)
struct Adversary28CompactJWSTests {

    private func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
    private func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
    private let payload = #"{"sub":"u","iss":"https://i"}"#
    private let signature: [UInt8] = [1, 2, 3, 4, 5]

    private func token(header: String) -> String { b64(header) + "." + b64(payload) + "." + b64(signature) }
    private func token(headerBytes: [UInt8]) -> String { b64(headerBytes) + "." + b64(payload) + "." + b64(signature) }

    private func parse(_ token: String) -> Result<JSONWebSignature, IDTokenValidationError> {
        Result { () throws(IDTokenValidationError) in try JSONWebSignature(compact: token) }
    }

    private func isMalformed(_ result: Result<JSONWebSignature, IDTokenValidationError>) -> Bool {
        if case .failure(.malformed) = result { true } else { false }
    }

    @Test func acceptsAWellFormedTokenAndKeepsItsParts() throws {
        let header = #"{"alg":"RS256","kid":"k1","typ":"JWT","x":{"y":[1,2]}}"#
        let compact = token(header: header)
        let jws = try JSONWebSignature(compact: compact)
        #expect(jws.algorithm == "RS256")
        #expect(jws.keyID == "k1")
        #expect(jws.signature == signature)
        #expect(jws.payloadBytes == Array(payload.utf8))
        #expect(jws.payload == Data(payload.utf8))
        let dots = compact.utf8.indices.filter { compact.utf8[$0] == UInt8(ascii: ".") }
        #expect(jws.signingInput == Array(compact.utf8[..<dots[1]]))
        let noKid = try JSONWebSignature(compact: token(header: #"{"alg":"ES256"}"#))
        #expect(noKid.keyID == nil)
        // Escapes in `alg` and `kid` are read.
        let escaped = try JSONWebSignature(compact: token(header: #"{"\u0061lg":"R\u0053256","kid":"\u00e9"}"#))
        #expect(escaped.algorithm == "RS256" && escaped.keyID == "é")
    }

    @Test func signingInputIsExactlyHeaderDotPayloadOnRandomTokens() throws {
        var rng = Adv28RNG(seed: 0x28_0500)
        var tried = 0
        for _ in 0..<2_000 {
            let kid = (0..<rng.int(0...10)).map { _ in String(UnicodeScalar(UInt8(rng.int(0x61...0x7A)))) }.joined()
            let header = "{\"alg\":\"ES256\"" + (kid.isEmpty ? "" : ",\"kid\":\"\(kid)\"") + "}"
            let body = (0..<rng.int(0...200)).map { _ in UInt8(rng.int(0...255)) }
            let sig = (1...rng.int(1...130)).map { _ in UInt8(rng.int(0...255)) }
            let headerPart = b64(header)
            let payloadPart = b64(body)
            let compact = headerPart + "." + payloadPart + "." + b64(sig)
            tried += 1
            let jws = try JSONWebSignature(compact: compact)
            #expect(jws.signingInput == Array((headerPart + "." + payloadPart).utf8))
            #expect(jws.payloadBytes == body && jws.signature == sig && jws.keyID == (kid.isEmpty ? nil : kid))
            let split = try CompactSerialization(compact)
            #expect(split.header == Array(header.utf8) && split.payload == body && split.signature == sig)
            #expect(split.signingInput == jws.signingInput)
        }
        #expect(tried == 2_000)
    }

    @Test func exactlyThreeParts() {
        let h = b64(#"{"alg":"RS256"}"#)
        let p = b64(payload)
        let s = b64(signature)
        let cases = [
            "", ".", "..", "...", h, h + "." + p, h + "." + p + "." + s + ".", h + "." + p + "." + s + "." + s,
            "." + h + "." + p + "." + s, h + ".." + p + "." + s, h + "." + p + "." + s + "\n",
            " " + h + "." + p + "." + s,
        ]
        for compact in cases {
            #expect(isMalformed(parse(compact)), "\(compact.debugDescription)")
        }
        for compact in ["", "a", "a.b", "a.b.c.d", "....", "a.b.c."] {
            #expect(throws: CompactSerialization.Failure.notThreeParts, "\(compact)") {
                try CompactSerialization(compact)
            }
        }
        #expect(throws: CompactSerialization.Failure.notBase64URL) { try CompactSerialization("a.b.c") }
        #expect(throws: CompactSerialization.Failure.notBase64URL) { try CompactSerialization(h + "=." + p + "." + s) }
        #expect(throws: CompactSerialization.Failure.notBase64URL) {
            try CompactSerialization(h + "." + p + "." + s + "=")
        }
        #expect(throws: CompactSerialization.Failure.notBase64URL) { try CompactSerialization(h + "." + p + "+." + s) }
        // Not decoding the signature: its part is not checked, and there is no signing input.
        let unchecked = try? CompactSerialization(h + "." + p + ".!!!", decodesSignature: false)
        #expect(
            unchecked?.signature == [] && unchecked?.signingInput == [] && unchecked?.payload == Array(payload.utf8)
        )
        #expect(throws: CompactSerialization.Failure.notThreeParts) {
            try CompactSerialization(h + "." + p, decodesSignature: false)
        }
        #expect(throws: CompactSerialization.Failure.notThreeParts) {
            try CompactSerialization(h + "." + p + ".a.b", decodesSignature: false)
        }
    }

    @Test func headerRules() {
        let refused = [
            "", "[]", "1", "\"alg\"", "null", "{}", #"{"kid":"k"}"#, #"{"alg":1}"#, #"{"alg":null}"#,
            #"{"alg":["RS256"]}"#,
            #"{"alg":"none"}"#, #"{"alg":"\u006eone"}"#, #"{"\u0061lg":"none"}"#, #"{"alg":"RS256","kid":1}"#,
            #"{"alg":"RS256","kid":{}}"#, #"{"alg":"RS256","kid":["k"]}"#, #"{"alg":"RS256","kid":true}"#,
            #"{"alg":"RS256","crit":["exp"]}"#, #"{"alg":"RS256","crit":[]}"#, #"{"alg":"RS256","crit":null}"#,
            #"{"alg":"RS256","\u0063rit":["x"]}"#, #"{"alg":"RS256","cr\u0069t":1}"#, #"{"alg":"RS256",}"#,
            #"{"alg":"RS256"} x"#, "{\"alg\":\"RS256\"}\u{0}", #"{"alg":"RS256","x":01}"#,
            #"{"alg":"RS256","x":"\uD800"}"#,
        ]
        for header in refused {
            #expect(isMalformed(parse(token(header: header))), "header \(header) accepted")
        }
        for bytes in [
            adv28Raw("{\"alg\":\"RS256\",\"x\":\"«C0»«80»\"}"), adv28Raw("«EF»«BB»«BF»{\"alg\":\"RS256\"}"),
            adv28Raw("{\"alg\":\"RS256\",\"x\":\"«ED»«A0»«80»\"}"),
        ] {
            #expect(isMalformed(parse(token(headerBytes: bytes))), "\(adv28Hex(bytes))")
        }
        // An empty signature.
        #expect(isMalformed(parse(b64(#"{"alg":"RS256"}"#) + "." + b64(payload) + ".")))
        // Accepted: `alg` any other string (the verifier decides), white space, unknown members.
        for header in [
            #" { "alg" : "HS256" } "#, #"{"alg":"RS256","x":{"crit":["exp"]}}"#, #"{"alg":"RS256","x":{"alg":"none"}}"#,
            #"{"alg":"RS256","jku":"https://x","jwk":{"kty":"RSA"}}"#,
        ] {
            if case .failure(let error) = parse(token(header: header)) { Issue.record("\(header): \(error)") }
        }
    }

    /// `"kid"` is a string or absent (per the doc: "if present, a string kid").
    @Test func kidNullIsNotAString() {
        let result = parse(token(header: #"{"alg":"RS256","kid":null}"#))
        #expect(isMalformed(result), "kid null read as \(result)")
    }

    @Test func aDuplicateHeaderMemberIsNamedAsSuch() {
        let headers = [
            #"{"alg":"RS256","alg":"RS256"}"#, #"{"alg":"RS256","alg":"none"}"#, #"{"alg":"none","alg":"RS256"}"#,
            #"{"alg":"RS256","\u0061lg":"ES256"}"#, #"{"alg":"RS256","kid":"a","kid":"b"}"#,
            #"{"alg":"RS256","kid":"a","k\u0069d":1}"#,
            #"{"alg":"RS256","crit":[],"crit":[]}"#, #"{"alg":"RS256","foo":1,"foo":"x"}"#,
            #"{"alg":"RS256","x":{"a":1,"a":2}}"#,
            #"{"alg":"RS256","x":[[{"b":1,"\u0062":2}]]}"#, "{\"alg\":\"RS256\",\"é\":1,\"e\u{0301}\":2}",
            #"{"typ":"JWT","typ":"JWT","alg":"RS256"}"#,
        ]
        for header in headers {
            let result = parse(token(header: header))
            guard case .failure(let error) = result else {
                Issue.record("\(header) accepted")
                continue
            }
            #expect(error == .malformed("header names a member twice"), "\(header): \(error)")
        }
    }

    @Test func descriptionsNeverEchoHeaderValues() throws {
        let secretKid = "KIDsecretVALUE42"
        let secretAlg = "ALGsecretVALUE43"
        let secretTyp = "TYPsecretVALUE44"
        let probes = [secretKid, secretAlg, secretTyp, "secretVALUE"]
        func leaks(_ text: String) -> Bool { probes.contains { text.contains($0) } }
        let unregistered = try JSONWebSignature(
            compact: token(header: "{\"alg\":\"\(secretAlg)\",\"kid\":\"\(secretKid)\",\"typ\":\"\(secretTyp)\"}")
        )
        var dumped = ""
        dump(unregistered, to: &dumped)
        for text in [
            unregistered.description, unregistered.debugDescription, "\(unregistered)",
            String(reflecting: unregistered), dumped,
        ] {
            #expect(!leaks(text), "leaks: \(text)")
        }
        #expect(unregistered.description.contains("unregistered"))
        #expect(unregistered.description.contains("present"))
        let registered = try JSONWebSignature(compact: token(header: "{\"alg\":\"ES256\",\"kid\":\"\(secretKid)\"}"))
        var dumped2 = ""
        dump(registered, to: &dumped2)
        #expect(registered.description.contains("ES256"))
        for text in [registered.description, dumped2, String(reflecting: registered)] {
            #expect(!leaks(text), "leaks: \(text)")
        }
        let noKid = try JSONWebSignature(compact: token(header: #"{"alg":"RS256"}"#))
        #expect(noKid.description.contains("none"))
        // An alg spelled close to a registered one, or carrying one, is not shown.
        for alg in ["RS256 secretVALUE", "secretVALUE RS256", "RS256\nsecretVALUE", "rs256secretVALUE"] {
            let jws = try JSONWebSignature(
                compact: token(
                    header:
                        "{\"alg\":\(String(data: try JSONSerialization.data(withJSONObject: alg, options: .fragmentsAllowed), encoding: .utf8)!)}"
                )
            )
            var d = ""
            dump(jws, to: &d)
            #expect(!leaks(jws.description) && !leaks(d), "\(alg.debugDescription): \(jws.description)")
        }
        // The errors say why, never what the header carried.
        let hostile = [
            "{\"alg\":\"\(secretAlg)\",\"alg\":\"\(secretAlg)\"}",
            "{\"alg\":\"\(secretAlg)\",\"crit\":[\"\(secretTyp)\"]}",
            "{\"alg\":\"\(secretAlg)\",\"kid\":1}",
            "{\"alg\":\"\(secretAlg)\",\"kid\":\"\(secretKid)\",\"x\":\"\\uD800\"}",
            "{\"alg\":\"\(secretAlg)\",\"kid\":\"\(secretKid)\"", "{\"\(secretAlg)\":1}",
            "{\"alg\":\"\(secretAlg)\",\"\(secretKid)\":1,\"\(secretKid)\":2}",
        ]
        for header in hostile {
            guard case .failure(let error) = parse(token(header: header)) else {
                Issue.record("\(header) accepted")
                continue
            }
            var d = ""
            dump(error, to: &d)
            #expect(
                !leaks(error.description) && !leaks(d) && !leaks(String(reflecting: error)),
                "\(header): \(error.description)"
            )
        }
    }

    @Test func maximumLengthIsABoundInBytes() throws {
        let max = JSONWebSignature.maximumLength
        let prefix = b64(#"{"alg":"RS256"}"#) + "."
        let suffix = "." + b64(signature)
        func tokenOfLength(_ n: Int) -> String {
            // A canonical payload part and a signature part whose lengths add up to `n`.
            for sigBytes in 1...8 {
                let sigPart = b64([UInt8](repeating: 7, count: sigBytes))
                let payloadLength = n - prefix.utf8.count - 1 - sigPart.utf8.count
                if payloadLength % 4 != 1 {
                    return prefix + String(repeating: "A", count: payloadLength) + "." + sigPart
                }
            }
            fatalError()
        }
        let atBound = tokenOfLength(max)
        #expect(atBound.utf8.count == max)
        #expect(throws: Never.self) { try JSONWebSignature(compact: atBound) }
        let over = tokenOfLength(max + 1)
        #expect(over.utf8.count == max + 1)
        #expect(isMalformed(parse(over)))
        // Non-ASCII bytes count as bytes.
        let multibyte = prefix + String(repeating: "é", count: max / 2) + suffix
        #expect(isMalformed(parse(multibyte)))
    }
}
