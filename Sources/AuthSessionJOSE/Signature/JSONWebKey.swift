import AuthSessionRedaction
import Foundation

/// A public key that verifies JWT signatures, as a JSON Web Key (RFC 7517) describes it: an RSA
/// key for `RS256` or a P-256 key for `ES256`.
///
/// The key decides the algorithm: a key verifies only tokens whose header claims the key's own
/// ``algorithm``, so a token cannot make an RSA key check an HMAC (`HS256` with the public key
/// as its secret) or skip the check (`none`).
///
/// ``description`` shows the key type, algorithm and identifier.
///
/// All operations are thread-safe.
public struct JSONWebKey: Sendable, Hashable, CustomStringConvertible {

    /// The key's `kid`, if it has one.
    public let keyID: String?

    /// The only algorithm this key verifies: `RS256` for an RSA key, `ES256` for a P-256 key.
    public let algorithm: String

    private let material: Material

    private enum Material: Sendable, Hashable {
        case rsa(RSAPublicKey)
        case p256(P256PublicKey)
    }

    /// The algorithms this package verifies.
    public static let supportedAlgorithms: Set<String> = ["RS256", "ES256"]

    /// An RSA key for `RS256` (RSASSA-PKCS1-v1_5 with SHA-256).
    ///
    /// - Parameters:
    ///   - modulus: The modulus `n`, big-endian; 2048 to 8192 bits (RFC 7518 §3.3 asks for 2048 at
    ///     least).
    ///   - exponent: The public exponent `e`, big-endian: odd, at least 3, at most 64 bits.
    ///   - keyID: The key's `kid`.
    /// - Throws: ``JSONWebKeySetError/unusableKey(keyID:reason:)`` for a key outside those bounds.
    public init(
        rsaModulus modulus: some Collection<UInt8>,
        exponent: some Collection<UInt8>,
        keyID: String?
    )
        throws(JSONWebKeySetError)
    {
        do throws(CryptoKeyError) {
            material = .rsa(try RSAPublicKey(modulus: modulus, exponent: exponent))
        } catch {
            throw .unusableKey(keyID: keyID, reason: error.description)
        }
        self.keyID = keyID
        algorithm = "RS256"
    }

    /// A P-256 key for `ES256` (ECDSA with SHA-256).
    ///
    /// - Parameters:
    ///   - x: The point's x coordinate, 32 bytes big-endian.
    ///   - y: The point's y coordinate, 32 bytes big-endian.
    ///   - keyID: The key's `kid`.
    /// - Throws: ``JSONWebKeySetError/unusableKey(keyID:reason:)`` for coordinates that are not
    ///   32 bytes each, or a point that is not on the curve.
    public init(p256X x: some Collection<UInt8>, y: some Collection<UInt8>, keyID: String?) throws(JSONWebKeySetError) {
        do throws(CryptoKeyError) {
            material = .p256(try P256PublicKey(x: x, y: y))
        } catch {
            throw .unusableKey(keyID: keyID, reason: error.description)
        }
        self.keyID = keyID
        algorithm = "ES256"
    }

    /// Reads one member of a key set's `keys` (RFC 7517 §4, RFC 7518 §6).
    ///
    /// A key for another use (`use` other than `sig`, `key_ops` without `verify`), of another type
    /// or curve, or for another algorithm (`alg` other than the one its type verifies here) is
    /// unusable: it throws, and the key set skips it. Private members (`d`, ...) are ignored.
    package init(jsonObject object: [String: JSONValue]) throws(JSONWebKeySetError) {
        let keyID: String?
        switch object["kid"] {
        case nil, .null?: keyID = nil
        case .string(let value)?: keyID = value
        default: throw .unusableKey(keyID: nil, reason: "kid is not a string")
        }
        func unusable(_ reason: String) -> JSONWebKeySetError {
            .unusableKey(keyID: keyID, reason: reason)
        }
        func bytes(_ name: String) throws(JSONWebKeySetError) -> Data {
            guard let text = object[name]?.stringValue, let data = Base64URL.decode(text), !data.isEmpty else {
                throw unusable("\(name) is missing or not base64url")
            }
            return data
        }
        if let use = object["use"], use != .null {
            guard use.stringValue == "sig" else { throw unusable("use is not sig") }
        }
        if let operations = object["key_ops"], operations != .null {
            guard case .array(let values) = operations, values.contains(.string("verify")) else {
                throw unusable("key_ops does not allow verify")
            }
        }
        let declaredAlgorithm: String?
        switch object["alg"] {
        case nil, .null?: declaredAlgorithm = nil
        case .string(let value)?: declaredAlgorithm = value
        default: throw unusable("alg is not a string")
        }
        switch object["kty"]?.stringValue {
        case "RSA":
            guard declaredAlgorithm == nil || declaredAlgorithm == "RS256" else {
                throw unusable("an RSA key for an algorithm other than RS256")
            }
            try self.init(rsaModulus: try bytes("n"), exponent: try bytes("e"), keyID: keyID)
        case "EC":
            guard object["crv"]?.stringValue == "P-256" else { throw unusable("a curve other than P-256") }
            guard declaredAlgorithm == nil || declaredAlgorithm == "ES256" else {
                throw unusable("a P-256 key for an algorithm other than ES256")
            }
            try self.init(p256X: try bytes("x"), y: try bytes("y"), keyID: keyID)
        case let type?:
            throw unusable("key type \(SecretRedactor.sanitized(String(type.prefix(16)))) is not supported")
        case nil:
            throw unusable("kty is missing")
        }
    }

    /// Whether `token`'s signature is this key's over its signing input. `false` as well when the
    /// token claims another algorithm than the key's.
    ///
    /// - Parameter token: The token.
    /// - Returns: `true` only for a valid signature by this key with its algorithm.
    public func verifies(_ token: JSONWebSignature) -> Bool {
        guard token.algorithm == algorithm else { return false }
        switch material {
        case .rsa(let key): return key.isValidPKCS1v15SHA256Signature(token.signature, for: token.signingInput)
        case .p256(let key): return key.isValidSignature(token.signature, for: token.signingInput)
        }
    }

    /// The key type, algorithm and identifier.
    public var description: String {
        let type =
            switch material {
            case .rsa(let key): "RSA \(key.modulusBitCount) bits"
            case .p256: "EC P-256"
            }
        return
            "JSONWebKey(\(type), \(algorithm), kid: \(keyID.map { SecretRedactor.sanitized(String($0.prefix(64))) } ?? "none"))"
    }
}

extension JSONWebKey: CustomReflectable {

    /// The key type, algorithm and identifier as ``description`` shows them (the identifier
    /// cleaned): `dump` never shows a key identifier as the set carried it.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .struct)
    }
}
