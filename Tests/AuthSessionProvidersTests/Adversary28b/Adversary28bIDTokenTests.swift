import AuthSessionProviders
import Foundation
import Testing

// `IDTokenClaims(parsing:)` and `IDTokenClaims(_: JSONWebSignature)` must agree on every token
// (claims and errors), refuse a member named twice at any depth (escaped spellings included),
// keep unregistered string claims in `profile` and never put a registered claim there.

private func b64u28b(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

private func token28b(
    header: String = #"{"alg":"RS256","kid":"k"}"#,
    payload: String,
    signature: String = "c2ln"
) -> String {
    "\(b64u28b(Array(header.utf8))).\(b64u28b(Array(payload.utf8))).\(signature)"
}

private func token28b(header: String = #"{"alg":"RS256"}"#, payloadBytes: [UInt8]) -> String {
    "\(b64u28b(Array(header.utf8))).\(b64u28b(payloadBytes)).c2ln"
}

private typealias Outcome28b = Result<IDTokenClaims, IDTokenValidationError>

private func parsed28b(_ token: String) -> Outcome28b {
    Result { () throws(IDTokenValidationError) in try IDTokenClaims(parsing: token) }
}

private func split28b(_ token: String) -> Outcome28b {
    Result { () throws(IDTokenValidationError) in try IDTokenClaims(try JSONWebSignature(compact: token)) }
}

/// The registered claims (RFC 7519 §4.1 and OpenID Connect Core's ID token claims).
private let registered28b = [
    "iss", "sub", "aud", "exp", "iat", "nbf", "jti", "azp", "nonce", "auth_time", "acr", "amr", "at_hash",
    "c_hash", "sid", "name", "email",
]

private let base28b = #""iss":"https://issuer.example","sub":"user-1","aud":"client","exp":2000000000,"iat":1000000000"#

/// Escapes every character of `name` as `\uXXXX`, or some of them.
private func escaped28b(_ name: String, every: Bool = true, using generator: inout some RandomNumberGenerator) -> String
{
    var text = ""
    for scalar in name.unicodeScalars {
        if every || Bool.random(using: &generator) {
            if scalar.value > 0xFFFF {
                let value = scalar.value - 0x10000
                text += String(format: "\\u%04X\\u%04x", 0xD800 + (value >> 10), 0xDC00 + (value & 0x3FF))
            } else {
                text += String(format: Bool.random(using: &generator) ? "\\u%04x" : "\\u%04X", scalar.value)
            }
        } else {
            text.unicodeScalars.append(scalar)
        }
    }
    return text
}

@Suite("Adversary28b: ID token claims, read two ways")
struct Adversary28bIDTokenTests {

    /// Payloads both readers must accept or refuse alike.
    static let payloads: [(String, String)] = [
        ("baseline", "{\(base28b)}"),
        ("aud array", #"{"iss":"i","sub":"s","aud":["a","b"],"azp":"a","exp":2,"iat":1}"#),
        ("profile", "{\(base28b),\"preferred_username\":\"u\",\"given_name\":\"G\",\"x\":\"\",\"n\":1,\"o\":{}}"),
        (
            "escaped registered name alone",
            #"{"\u0069ss":"i","s\u0075b":"s","aud":"a","exp":2,"iat":1,"\u006eonce":"n"}"#
        ),
        ("escaped sub next to sub", #"{"iss":"i","sub":"s","\u0073ub":"t","aud":"a","exp":2,"iat":1}"#),
        ("sub next to escaped sub (order)", #"{"iss":"i","\u0073ub":"t","sub":"s","aud":"a","exp":2,"iat":1}"#),
        ("upper-case escape", #"{"iss":"i","sub":"s","\u0053ub":"t","aud":"a","exp":2,"iat":1}"#),
        ("escaped slash in a name", #"{"iss":"i","sub":"s","aud":"a","exp":2,"iat":1,"a/b":"1","a\/b":"2"}"#),
        ("duplicate unregistered", "{\(base28b),\"x\":\"1\",\"x\":\"2\"}"),
        ("duplicate unregistered, string then number", "{\(base28b),\"x\":\"1\",\"x\":2}"),
        ("duplicate unregistered, number then string", "{\(base28b),\"x\":2,\"x\":\"1\"}"),
        ("duplicate registered, number", "{\(base28b),\"exp\":3}"),
        ("duplicate nested", "{\(base28b),\"address\":{\"a\":1,\"\\u0061\":2}}"),
        ("duplicate nested in array", "{\(base28b),\"l\":[1,{\"a\":{\"b\":1,\"b\":1}}]}"),
        (
            "duplicate at depth 10",
            "{\(base28b),\"d\":" + String(repeating: "{\"z\":", count: 9) + "{\"q\":1,\"q\":2}"
                + String(repeating: "}", count: 9) + "}"
        ),
        (
            "canonically equivalent names (e + U+0301, U+00E9)",
            "{\(base28b),\"caf\\u00e9\":\"1\",\"cafe\\u0301\":\"2\"}"
        ),
        ("canonically equivalent names, raw UTF-8", "{\(base28b),\"café\":\"1\",\"cafe\u{301}\":\"2\"}"),
        ("Kelvin sign and K, unregistered", "{\(base28b),\"K\":\"1\",\"\\u212A\":\"2\"}"),
        ("canonically equivalent names nested", "{\(base28b),\"o\":{\"caf\\u00e9\":1,\"cafe\\u0301\":2}}"),
        ("names differing only by NUL", "{\(base28b),\"sub\\u0000\":\"z\"}"),
        ("missing iss", #"{"sub":"s","aud":"a","exp":2,"iat":1}"#),
        ("empty sub", #"{"iss":"i","sub":"","aud":"a","exp":2,"iat":1}"#),
        ("aud empty array", #"{"iss":"i","sub":"s","aud":[],"exp":2,"iat":1}"#),
        ("aud with a number", #"{"iss":"i","sub":"s","aud":["a",1],"exp":2,"iat":1}"#),
        ("exp a string", #"{"iss":"i","sub":"s","aud":"a","exp":"2","iat":1}"#),
        ("exp too large", #"{"iss":"i","sub":"s","aud":"a","exp":1e400,"iat":1}"#),
        ("nbf a string", "{\(base28b),\"nbf\":\"x\"}"),
        ("nbf null", "{\(base28b),\"nbf\":null}"),
        ("payload an array", "[1]"),
        ("payload trailing comma", "{\(base28b),}"),
        ("payload with trailing text", "{\(base28b)} x"),
        (
            "payload nested 70 deep",
            "{\(base28b),\"d\":" + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "}"
        ),
        ("lone surrogate escape in a name", "{\(base28b),\"\\ud800\":\"x\"}"),
        ("control character in a value", "{\(base28b),\"x\":\"a\u{1}b\"}"),
        (
            "registered claims as strings",
            "{\(base28b),\"jti\":\"j\",\"acr\":\"1\",\"sid\":\"s\",\"at_hash\":\"h\",\"c_hash\":\"c\",\"amr\":\"pwd\",\"auth_time\":\"now\",\"azp\":\"client\",\"nonce\":\"n\",\"name\":\"N\",\"email\":\"e@x\"}"
        ),
    ]

    @Test("Adversary28b: both readers agree (claims or error)", arguments: 0..<35)
    func agree(index: Int) {
        let (name, payload) = Self.payloads[index]
        let token = token28b(payload: payload)
        let first = parsed28b(token)
        let second = split28b(token)
        #expect(first == second, "\(name): parsing \(first) vs split \(second)")
    }

    @Test(
        "Adversary28b: a member named twice is refused, at any depth, in any spelling",
        arguments: [
            "escaped sub next to sub", "sub next to escaped sub (order)", "escaped slash in a name",
            "duplicate unregistered",
            "duplicate unregistered, string then number", "duplicate unregistered, number then string",
            "duplicate registered, number", "duplicate nested", "duplicate nested in array", "duplicate at depth 10",
            "canonically equivalent names (e + U+0301, U+00E9)", "canonically equivalent names, raw UTF-8",
            "Kelvin sign and K, unregistered", "canonically equivalent names nested",
        ]
    )
    func duplicatesRefused(name: String) throws {
        let payload = try #require(Self.payloads.first { $0.0 == name }?.1)
        let token = token28b(payload: payload)
        for (reader, outcome) in [("parsing", parsed28b(token)), ("split", split28b(token))] {
            guard case .failure(.malformed) = outcome else {
                Issue.record("\(name): \(reader) accepted \(outcome)")
                continue
            }
        }
    }

    @Test("Adversary28b: registered claims never in profile, unregistered strings always there")
    func profileContents() throws {
        let token = token28b(payload: Self.payloads.last!.1 + "")
        let claims = try IDTokenClaims(parsing: token)
        for name in registered28b {
            #expect(claims.profile[name] == nil, "registered claim \(name) in profile")
        }
        #expect(claims.nonce == "n" && claims.name == "N" && claims.email == "e@x")

        let escapedOnly = token28b(payload: Self.payloads[3].1)
        let read = try IDTokenClaims(parsing: escapedOnly)
        #expect(read.issuer == "i" && read.subject == "s" && read.nonce == "n")
        #expect(read.profile.isEmpty, "escaped registered names landed in profile: \(read.profile)")

        let profile = try IDTokenClaims(parsing: token28b(payload: Self.payloads[2].1))
        #expect(profile.profile == ["preferred_username": "u", "given_name": "G", "x": ""], "\(profile.profile)")
        let nul = try IDTokenClaims(parsing: token28b(payload: "{\(base28b),\"sub\\u0000\":\"z\"}"))
        #expect(nul.profile == ["sub\u{0}": "z"] && nul.subject == "user-1")
    }

    @Test("Adversary28b: random claim sets with random escapes and duplicates: both readers agree with the model")
    func randomized() throws {
        var generator = SystemRandomNumberGenerator()
        let unregistered = [
            "preferred_username", "given_name", "x", "K", "caf\u{e9}", "\u{1F600}face", "a b", "SUB", "Sub", "sub_",
            "issuer",
        ]
        var mismatches: [String] = []
        for _ in 0..<400 {
            var members: [(logical: String, text: String, value: String, isString: Bool)] = []
            // The required claims, once each (maybe again below).
            members.append(("iss", "iss", "\"i\"", true))
            members.append(("sub", "sub", "\"s\"", true))
            members.append(("aud", "aud", "\"a\"", true))
            members.append(("exp", "exp", "2000000000", false))
            members.append(("iat", "iat", "1000000000", false))
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let pool = Bool.random(using: &generator) ? registered28b : unregistered
                let logical = pool.randomElement(using: &generator)!
                let isString = Int.random(in: 0..<4, using: &generator) != 0
                let value =
                    isString
                    ? "\"v\(Int.random(in: 0..<9, using: &generator))\"" : "\(Int.random(in: 1..<9, using: &generator))"
                members.append((logical, logical, value, isString))
            }
            members.shuffle(using: &generator)
            for index in members.indices where Int.random(in: 0..<3, using: &generator) == 0 {
                members[index].text = escaped28b(members[index].logical, every: false, using: &generator)
            }
            let payload = "{" + members.map { "\"\($0.text)\":\($0.value)" }.joined(separator: ",") + "}"
            let token = token28b(payload: payload)
            let first = parsed28b(token)
            let second = split28b(token)
            if first != second { mismatches.append("disagree on \(payload): \(first) vs \(second)") }
            let names = members.map(\.logical)
            let hasDuplicate = Set(names).count != names.count
            switch first {
            case .failure(.malformed):
                if !hasDuplicate { mismatches.append("refused without duplicate: \(payload)") }
            case .failure(let error):
                // Only a required claim with a number for a string, or the other way, may be missing.
                if hasDuplicate { mismatches.append("duplicate not refused (\(error)): \(payload)") }
            case .success(let claims):
                if hasDuplicate { mismatches.append("duplicate accepted: \(payload)") }
                var expected: [String: String] = [:]
                for member in members where member.isString && !registered28b.contains(member.logical) {
                    expected[member.logical] = String(member.value.dropFirst().dropLast())
                }
                if claims.profile != expected {
                    mismatches.append("profile \(claims.profile) is not \(expected): \(payload)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(3))")
    }

    /// Tokens the split (`JSONWebSignature`) refuses; `IDTokenClaims(parsing:)` says it throws
    /// `malformed` "for anything but three base64url parts with a JSON object header and payload,
    /// ..., or an `alg` of `none`".
    static let headerCases: [(String, String)] = [
        ("signature part not base64url", token28b(payload: "{\(base28b)}", signature: "!!!")),
        ("signature part padded", token28b(payload: "{\(base28b)}", signature: "c2ln=")),
        ("signature part of 1 character (never base64url)", token28b(payload: "{\(base28b)}", signature: "A")),
        ("signature part non-canonical (trailing bits)", token28b(payload: "{\(base28b)}", signature: "c2l")),
        ("empty signature", token28b(payload: "{\(base28b)}", signature: "")),
        ("alg empty", token28b(header: #"{"alg":""}"#, payload: "{\(base28b)}")),
        ("alg a number", token28b(header: #"{"alg":1}"#, payload: "{\(base28b)}")),
        ("crit present", token28b(header: #"{"alg":"RS256","crit":["exp"],"exp":1}"#, payload: "{\(base28b)}")),
        ("kid a number", token28b(header: #"{"alg":"RS256","kid":1}"#, payload: "{\(base28b)}")),
        ("alg NoNe", token28b(header: #"{"alg":"NoNe"}"#, payload: "{\(base28b)}")),
        (
            "header duplicate alg (escaped)",
            token28b(header: #"{"alg":"RS256","\u0061lg":"none"}"#, payload: "{\(base28b)}")
        ),
        ("header array", token28b(header: "[]", payload: "{\(base28b)}")),
        ("header not UTF-8", "\(b64u28b([0x7B, 0xFF, 0x7D])).\(b64u28b(Array("{\(base28b)}".utf8))).c2ln"),
        (
            "header duplicate, payload not UTF-8",
            "\(b64u28b(Array(#"{"alg":"RS256","alg":"RS256"}"#.utf8))).\(b64u28b([0xFF])).c2ln"
        ),
    ]

    /// Both readers refuse every one of these. Their sentences differ by design where they read
    /// differently (the claims reader names the header or the payload, and reports either part's
    /// encoding first), so the refusal is compared, and its kind: both `malformed`.
    @Test("Adversary28b: tokens the split refuses: parsing refuses them too, as malformed", arguments: 0..<14)
    func headerDisagreements(index: Int) {
        let (name, token) = Self.headerCases[index]
        let first = parsed28b(token)
        let second = split28b(token)
        #expect(Self.isMalformed(first) && Self.isMalformed(second), "\(name): parsing \(first) vs split \(second)")
    }

    private static func isMalformed(_ outcome: Outcome28b) -> Bool {
        if case .failure(.malformed) = outcome { return true }
        return false
    }
}
