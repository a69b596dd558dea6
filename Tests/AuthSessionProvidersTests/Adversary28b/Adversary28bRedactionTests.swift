import AuthSessionInterface
import AuthSessionProviders
import Foundation
import Testing

// A registered secret put in every field of the JOSE errors and in a JWS header's `kid` and
// `alg` must never appear in `description`, `String(reflecting:)`, `dump` or
// `localizedDescription` (SecretRedactor's doc: "Keeps credentials out of every message the
// package renders: error sentences, description, debugDescription, dump").

/// Letters only, 21 characters: no credential shape catches it; only the exact layer can.
private let secret28b = "zebracornflakepudding"

private func renderings28b(_ value: Any) -> [String: String] {
    var dumped = ""
    dump(value, to: &dumped)
    var result = [
        "description": String(describing: value),
        "interpolation": "\(value)",
        "String(reflecting:)": String(reflecting: value),
        "dump": dumped,
    ]
    if let error = value as? any Error {
        result["localizedDescription"] = error.localizedDescription
        result["NSError"] = "\(error as NSError)"
    }
    return result
}

private func leaks28b(_ value: Any, _ secret: String = secret28b) -> [String] {
    renderings28b(value).filter { $0.value.contains(secret) }.map { "\($0.key): \($0.value)" }.sorted()
}

private func base64URL28b(_ text: String) -> String {
    Data(text.utf8).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

@Suite("Adversary28b: registered secrets never appear in renderings", .serialized)
struct Adversary28bRedactionTests {

    static let idTokenErrors: [IDTokenValidationError] = [
        .malformed(secret28b),
        .missingClaim(secret28b),
        .issuerMismatch(expected: secret28b, actual: secret28b),
        .audienceMismatch(expected: secret28b, actual: [secret28b, "x" + secret28b]),
        .authorizedPartyMismatch(expected: secret28b, actual: secret28b),
        .subjectMismatch(expected: secret28b, actual: secret28b),
        .unsupportedAlgorithm(secret28b),
        .unknownSigningKey(keyID: secret28b),
        .keyAlgorithmMismatch(keyID: secret28b, keyAlgorithm: secret28b, tokenAlgorithm: secret28b),
    ]

    @Test("Adversary28b: IDTokenValidationError, every string field", arguments: 0..<9)
    func idTokenValidationError(index: Int) {
        let registration = SecretRedactor.register(secret28b)
        defer { registration.cancel() }
        let error = Self.idTokenErrors[index]
        #expect(leaks28b(error).isEmpty, "\(leaks28b(error))")
        // Wrapped in an optional and an array, as a log line might hold it.
        #expect(leaks28b([error] as [IDTokenValidationError]).isEmpty, "in an array: \(leaks28b([error]))")
    }

    @Test("Adversary28b: JSONWebKeySetError, every string field", arguments: 0..<3)
    func keySetError(index: Int) {
        let registration = SecretRedactor.register(secret28b)
        defer { registration.cancel() }
        let errors: [JSONWebKeySetError] = [
            .malformed(secret28b),
            .unusableKey(keyID: secret28b, reason: "r"),
            .unusableKey(keyID: "k", reason: secret28b),
        ]
        #expect(leaks28b(errors[index]).isEmpty, "\(leaks28b(errors[index]))")
    }

    @Test("Adversary28b: a JWS header's kid and alg, and the errors a key set gives for it")
    func webSignatureHeader() throws {
        let registration = SecretRedactor.register(secret28b)
        defer { registration.cancel() }
        let header = base64URL28b("{\"alg\":\"\(secret28b)\",\"kid\":\"\(secret28b)\"}")
        let payload = base64URL28b("{\"iss\":\"i\",\"sub\":\"s\",\"aud\":\"a\",\"exp\":1,\"iat\":1}")
        let token = try JSONWebSignature(compact: "\(header).\(payload).AAAA")
        #expect(leaks28b(token).isEmpty, "\(leaks28b(token))")
        // A JWK with the secret as its kid, and the set: what a verifier renders.
        let x: [UInt8] = Array(Data(base64Encoded: "axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY=")!)
        let y: [UInt8] = Array(Data(base64Encoded: "T+NC4v4af5uO5+tKfA+eFivOM1drMV7Oy7ZAaDe/UfU=")!)
        let key = try JSONWebKey(p256X: x, y: y, keyID: secret28b)
        #expect(leaks28b(key).isEmpty, "JSONWebKey: \(leaks28b(key))")
        let set = JSONWebKeySet(keys: [key])
        #expect(leaks28b(set).isEmpty, "JSONWebKeySet: \(leaks28b(set))")
        let skippedSet = try JSONWebKeySet(
            jsonData: Data("{\"keys\":[{\"kty\":\"oct\",\"kid\":\"\(secret28b)\"}]}".utf8)
        )
        #expect(leaks28b(skippedSet).isEmpty, "JSONWebKeySet with a skipped key: \(leaks28b(skippedSet))")
        // An unusable key thrown with the secret as its kid, by the library itself.
        do {
            _ = try JSONWebKey(p256X: [1, 2, 3], y: [4], keyID: secret28b)
            Issue.record("a bad point was accepted")
        } catch {
            #expect(leaks28b(error).isEmpty, "thrown by JSONWebKey: \(leaks28b(error))")
        }
    }

    @Test("Adversary28b: the secret in JSON-escaped and percent-encoded forms in an error's field")
    func encodedForms() {
        let registration = SecretRedactor.register(secret28b)
        defer { registration.cancel() }
        let escaped = secret28b.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
        let percent = secret28b.utf8.map { String(format: "%%%02X", $0) }.joined()
        for form in [escaped, percent] {
            let error = IDTokenValidationError.malformed("value \(form)")
            let shown = renderings28b(error).filter { $0.key != "dump" }
            for (name, text) in shown {
                #expect(!text.contains(form), "\(name): \(text)")
            }
        }
    }
}
