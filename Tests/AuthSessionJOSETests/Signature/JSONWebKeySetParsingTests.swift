import AuthSessionJOSE
import AuthSessionMocks
import Foundation
import Testing

/// Reading tokens and key sets from hostile input: a clear, typed refusal for what cannot be
/// used, the usable rest kept.
@Suite struct JSONWebKeySetParsingTests {

    private func keySet(_ members: String) throws(JSONWebKeySetError) -> JSONWebKeySet {
        try JSONWebKeySet(jsonData: Data(#"{"keys": [\#(members)]}"#.utf8))
    }

    private func member(_ object: [String: String]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func readsRSAAndP256KeysAndImpliesTheirAlgorithms() throws {
        let rsa = JWTSigner(.rs256(.testKeyA), keyID: "r")
        let ec = JWTSigner.randomES256()
        var rsaObject = rsa.jwk
        rsaObject["alg"] = nil
        rsaObject["use"] = nil
        let set = try keySet(member(rsaObject) + "," + member(ec.jwk))
        #expect(set.keys.map(\.keyID) == ["r", ec.keyID])
        #expect(set.keys.map(\.algorithm) == ["RS256", "ES256"])
        #expect(set.skippedKeys.isEmpty)
        #expect(set.description.hasPrefix("JSONWebKeySet(2 keys: r, "))
    }

    @Test func skipsWhatItCannotUseAndSaysWhy() throws {
        let rsa = JWTSigner(.rs256(.testKeyA), keyID: "r").jwk
        let ec = JWTSigner.randomES256().jwk
        func with(_ base: [String: String], _ changes: [String: String?]) -> String {
            var object = base
            for (key, value) in changes { object[key] = value }
            return member(object)
        }
        let members = [
            with(rsa, ["kid": "enc", "use": "enc"]),
            with(rsa, ["kid": "ps", "alg": "PS256"]),
            with(rsa, ["kid": "even", "e": "AAI"]),
            with(rsa, ["kid": "bad64", "n": "***"]),
            with(ec, ["kid": "p384", "crv": "P-384"]),
            with(ec, ["kid": "es384", "alg": "ES384"]),
            with(ec, ["kid": "off", "y": Base64URL.encode([UInt8](repeating: 7, count: 32))]),
            with(ec, ["kid": "short", "x": Base64URL.encode([UInt8](repeating: 7, count: 31))]),
            #"{"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"}"#,
            #"{"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": "AAAA"}"#,
            #"{"kid": "nokty"}"#,
            #"{"kty": "RSA", "kid": "ops", "key_ops": ["encrypt"], "n": "AQAB", "e": "AQAB"}"#,
            #"{"kty": "RSA", "kid": 7}"#,
            #""a string""#,
            with(rsa, ["kid": "good"]),
        ]
        let set = try keySet(members.joined(separator: ","))
        #expect(set.keys.map(\.keyID) == ["good"])
        let reasons = Dictionary(set.skippedKeys.map { ($0.keyID ?? "-", $0.reason) }, uniquingKeysWith: { a, _ in a })
        #expect(set.skippedKeys.count == members.count - 1)
        #expect(reasons["enc"] == "use is not sig")
        #expect(reasons["ps"] == "an RSA key for an algorithm other than RS256")
        #expect(reasons["p384"] == "a curve other than P-256")
        #expect(reasons["es384"] == "a P-256 key for an algorithm other than ES256")
        #expect(reasons["hmac"]?.contains("not supported") == true, "a symmetric key never verifies a token")
        #expect(reasons["ops"] == "key_ops does not allow verify")
        #expect(reasons["nokty"] == "kty is missing")
        for kid in ["even", "bad64", "off", "short", "ed"] {
            #expect(reasons[kid] != nil, "\(kid)")
        }
    }

    @Test func refusesADocumentThatIsNoKeySet() {
        for document in ["", "[]", "{}", #"{"keys": {}}"#, "not json", #"{"keys": "x"}"#] {
            #expect(throws: JSONWebKeySetError.self, "\(document)") {
                try JSONWebKeySet(jsonData: Data(document.utf8))
            }
        }
        let tooMany = Array(repeating: #"{"kty": "oct"}"#, count: JSONWebKeySet.maximumKeyCount + 1)
        #expect(throws: JSONWebKeySetError.malformed("more than 100 keys")) {
            try keySet(tooMany.joined(separator: ","))
        }
    }

    @Test func readsACompactTokenAndRefusesWhatIsNotOne() throws {
        let signer = JWTSigner.randomES256()
        let token = signer.sign(claims: someClaims())
        let signed = try JSONWebSignature(compact: token)
        #expect(signed.algorithm == "ES256")
        #expect(signed.keyID == signer.keyID)
        #expect(
            signed.signingInput
                == Array(token.utf8.prefix(token.utf8.count - token.split(separator: ".")[2].utf8.count - 1))
        )
        #expect(signed.signature.count == 64)

        let header = token.split(separator: ".")[0]
        let cases: [(String, IDTokenValidationError)] = [
            ("a.b", .malformed("not three dot-separated parts")),
            ("a.b.c.d", .malformed("not three dot-separated parts")),
            ("a*.b.c", .malformed("a part is not base64url")),
            ("\(header).e30=.c2ln", .malformed("a part is not base64url")),
            ("\(header).e30.", .malformed("empty signature")),
            ("W10.e30.c2ln", .malformed("header is not a JSON object")),
            ("\(Base64URL.encode(Data(#"{"typ":"JWT"}"#.utf8))).e30.c2ln", .malformed("header has no alg")),
            ("\(Base64URL.encode(Data(#"{"alg":"none"}"#.utf8))).e30.c2ln", .malformed("unsecured (alg none)")),
            (
                "\(Base64URL.encode(Data(#"{"alg":"ES256","crit":["exp"],"exp":1}"#.utf8))).e30.c2ln",
                .malformed("header names critical extensions")
            ),
            ("\(Base64URL.encode(Data(#"{"alg":"ES256","kid":5}"#.utf8))).e30.c2ln", .malformed("kid is not a string")),
            (String(repeating: "A", count: JSONWebSignature.maximumLength + 1), .malformed("longer than 65536 bytes")),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text.prefix(60))") { try JSONWebSignature(compact: text) }
        }
    }
}
