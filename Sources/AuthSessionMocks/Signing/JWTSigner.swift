import AuthSessionProviders
import Foundation

/// Makes signed JWTs (JWS compact serialization) with a test key, and publishes its public key,
/// for a simulated identity provider and for tests of signature checks.
///
/// **For tests only**: its keys are test keys (see ``P256SigningKey`` and ``RSASigningKey``).
///
/// All operations are thread-safe.
package struct JWTSigner: Sendable {

    /// The private key and the algorithm it signs with.
    package enum Key: Sendable {
        /// ECDSA P-256 with SHA-256.
        case es256(P256SigningKey)
        /// RSASSA-PKCS1-v1_5 with SHA-256.
        case rs256(RSASigningKey)
    }

    /// The private key.
    package let key: Key

    /// The `kid` of the tokens it signs and of its published key; `nil` for none.
    package let keyID: String?

    /// A signer with `key`, naming `keyID`.
    package init(_ key: Key, keyID: String?) {
        self.key = key
        self.keyID = keyID
    }

    /// A signer with a new random P-256 key and a random `kid`.
    package static func randomES256() -> JWTSigner {
        JWTSigner(.es256(P256SigningKey()), keyID: UUID().uuidString.lowercased())
    }

    /// The algorithm it signs with: `ES256` or `RS256`.
    package var algorithm: String {
        switch key {
        case .es256: "ES256"
        case .rs256: "RS256"
        }
    }

    /// The public key as a JWK object, for a key set document.
    package var jwk: [String: String] {
        var object: [String: String] = ["use": "sig", "alg": algorithm]
        object["kid"] = keyID
        switch key {
        case .es256(let key):
            object["kty"] = "EC"
            object["crv"] = "P-256"
            object["x"] = Base64URL.encode(key.x)
            object["y"] = Base64URL.encode(key.y)
        case .rs256(let key):
            object["kty"] = "RSA"
            object["n"] = Base64URL.encode(key.modulus)
            object["e"] = Base64URL.encode(key.publicExponent)
        }
        return object
    }

    /// The public key as the package's verifier reads it.
    package var publicKey: JSONWebKey {
        switch key {
        case .es256(let key):
            // The signing key's own point: always a valid key.
            return try! JSONWebKey(p256X: key.x, y: key.y, keyID: keyID)
        case .rs256(let key):
            return try! JSONWebKey(rsaModulus: key.modulus, exponent: key.publicExponent, keyID: keyID)
        }
    }

    /// A key set document (`{"keys": [...]}`) with the public keys of `signers`.
    package static func keySetJSON(_ signers: [JWTSigner]) -> Data {
        // Only strings: encoding cannot fail.
        try! JSONSerialization.data(withJSONObject: ["keys": signers.map(\.jwk)], options: [.sortedKeys])
    }

    /// A compact JWS of `payload`, with a header of `alg`, `typ` and `kid`, plus `extraHeader`
    /// (which may override them, to forge a header).
    package func sign(payload: Data, extraHeader: [String: Any] = [:]) -> String {
        var header: [String: Any] = ["alg": algorithm, "typ": "JWT"]
        header["kid"] = keyID
        header.merge(extraHeader) { _, extra in extra }
        // A test's header: JSON values only.
        let headerData = try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let input = Base64URL.encode(headerData) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(signature(for: Array(input.utf8)))
    }

    /// A compact JWS of the JSON object `claims`.
    package func sign(claims: [String: Any], extraHeader: [String: Any] = [:]) -> String {
        // A test's claims: JSON values only.
        sign(
            payload: try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]),
            extraHeader: extraHeader
        )
    }

    /// The signature of `message` with the key.
    package func signature(for message: [UInt8]) -> [UInt8] {
        switch key {
        case .es256(let key): key.signature(for: message)
        case .rs256(let key): key.signature(for: message)
        }
    }
}
