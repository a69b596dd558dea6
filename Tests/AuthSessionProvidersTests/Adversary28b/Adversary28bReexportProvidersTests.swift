// Imports only what an app would: the session manager module. Every JOSE type below must come
// through its re-export (no `import AuthSessionJOSE` here).
import AuthSessionProviders
import Testing

@Suite("Adversary28b: import AuthSessionProviders alone gives the JOSE types")
struct Adversary28bReexportProvidersTests {

    @Test(
        "Adversary28b: JSONWebSignature, JSONWebKey, JSONWebKeySet, JSONWebKeySetError, IDTokenValidationError are usable"
    )
    func joseTypesAreVisible() throws {
        let error: IDTokenValidationError = .invalidSignature
        #expect(error == .invalidSignature)
        #expect(throws: IDTokenValidationError.self) { _ = try JSONWebSignature(compact: "a.b") }
        // The generator of P-256: a point on the curve.
        let x: [UInt8] = hex28b("6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296")
        let y: [UInt8] = hex28b("4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5")
        let key: JSONWebKey = try JSONWebKey(p256X: x, y: y, keyID: "k1")
        let set: JSONWebKeySet = JSONWebKeySet(keys: [key])
        #expect(set.keys.count == 1)
        #expect(throws: JSONWebKeySetError.self) { _ = try JSONWebKeySet(jsonData: .init("[]".utf8)) }
        let keySetError: JSONWebKeySetError = .malformed("x")
        #expect("\(keySetError)".contains("malformed"))
        // The claims reader of this module takes a split token.
        let header = "eyJhbGciOiJSUzI1NiJ9"  // {"alg":"RS256"}
        let payload = "eyJpc3MiOiJpIiwic3ViIjoicyIsImF1ZCI6ImEiLCJleHAiOjEsImlhdCI6MX0"  // iss, sub, aud, exp, iat
        let token = try JSONWebSignature(compact: "\(header).\(payload).AAAA")
        #expect(try IDTokenClaims(token).subject == "s")
    }
}

private func hex28b(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
