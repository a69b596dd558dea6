import AuthSessionProviders

/// A P-256 private key that signs ECDSA with SHA-256 (JWS `ES256`), for a simulated identity
/// provider in tests.
///
/// **For tests only**: signing is not constant-time and nothing protects the scalar in memory.
///
/// All operations are thread-safe.
package struct P256SigningKey: Sendable {

    /// The private scalar `d`, in `[1, n − 1]`.
    private let scalar: UInt256

    /// The public key, `d·G`.
    package let publicKey: P256PublicKey

    /// A new key with a random scalar (from `SystemRandomNumberGenerator`).
    package init() {
        var generator = SystemRandomNumberGenerator()
        while true {
            let candidate = Self.randomInteger(using: &generator)
            if let key = try? P256SigningKey(scalar: candidate.bigEndianBytes) {
                self = key
                return
            }
        }
    }

    /// The key with the given scalar.
    ///
    /// - Parameter scalar: `d`, big-endian, at most 32 bytes after leading zero bytes.
    /// - Throws: ``CryptoKeyError`` for a scalar not in `[1, n − 1]`.
    package init(scalar: some Collection<UInt8>) throws(CryptoKeyError) {
        guard let value = UInt256(bigEndianBytes: scalar.drop { $0 == 0 }), !value.isZero,
            value < P256Point.scalarField.modulus
        else {
            throw CryptoKeyError("scalar not in [1, n − 1]")
        }
        // d in [1, n − 1] and G of order n: d·G is never infinity.
        guard let point = P256Point.generator.multiplied(by: value).affineCoordinates else {
            throw CryptoKeyError("scalar not in [1, n − 1]")
        }
        self.scalar = value
        publicKey = try P256PublicKey(x: point.x.bigEndianBytes, y: point.y.bigEndianBytes)
    }

    /// The public key's x coordinate, 32 bytes big-endian (a JWK's `x`, before base64url).
    package var x: [UInt8] { publicKey.affineX.bigEndianBytes }

    /// The public key's y coordinate, 32 bytes big-endian (a JWK's `y`, before base64url).
    package var y: [UInt8] { publicKey.affineY.bigEndianBytes }

    /// The ECDSA P-256 SHA-256 signature of `message`, as `r ‖ s` (64 bytes, IEEE P1363: JWS's
    /// `ES256` encoding).
    ///
    /// Each signature uses a fresh random `k`, drawing again in the (astronomically unlikely)
    /// case that `r` or `s` is zero.
    ///
    /// - Parameter message: The bytes to sign (JWS's signing input).
    /// - Returns: `r ‖ s`, each 32 bytes big-endian.
    package func signature(for message: some Collection<UInt8>) -> [UInt8] {
        let scalars = P256Point.scalarField
        // SHA-256 gives exactly 32 bytes: the integer always exists.
        let digest = UInt256(bigEndianBytes: SHA256.hash(message)) ?? .zero
        let e = scalars.element(digest)
        let d = scalars.element(scalar)
        var generator = SystemRandomNumberGenerator()
        while true {
            let k = Self.randomInteger(using: &generator)
            guard !k.isZero, k < scalars.modulus,
                let point = P256Point.generator.multiplied(by: k).affineCoordinates
            else { continue }
            let r = scalars.reduced(point.x)
            guard !r.isZero else { continue }
            // s = k⁻¹·(e + r·d) mod n.
            let kInverse = scalars.inverse(of: scalars.element(k))
            let s = scalars.integer(scalars.multiply(kInverse, scalars.add(e, scalars.multiply(scalars.element(r), d))))
            guard !s.isZero else { continue }
            return r.bigEndianBytes + s.bigEndianBytes
        }
    }

    private static func randomInteger(using generator: inout SystemRandomNumberGenerator) -> UInt256 {
        UInt256(generator.next(), generator.next(), generator.next(), generator.next())
    }
}
