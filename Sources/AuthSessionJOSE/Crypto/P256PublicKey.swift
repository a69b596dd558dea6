/// A P-256 public key that verifies ECDSA signatures with SHA-256: JWS `ES256` (RFC 7518 §3.4,
/// FIPS 186-4 §6.4.2).
///
/// The key is a point checked to be on the curve, never infinity: arithmetic on a point off the
/// curve would run on another curve, where a forger could choose a weak group (an
/// invalid-curve attack). Not constant-time: verification uses public data only.
///
/// All operations are thread-safe.
package struct P256PublicKey: Sendable, Hashable {

    /// The affine x coordinate, an integer below `p`.
    package let affineX: UInt256

    /// The affine y coordinate, an integer below `p`.
    package let affineY: UInt256

    /// The key at the affine point `(x, y)`.
    ///
    /// - Parameters:
    ///   - x: The x coordinate, exactly 32 big-endian bytes (a JWK's fixed length, RFC 7518
    ///     §6.2.1.2).
    ///   - y: The y coordinate, exactly 32 big-endian bytes.
    /// - Throws: ``CryptoKeyError`` for another length, a coordinate not below `p`, or a point
    ///   not on the curve.
    package init(x: some Collection<UInt8>, y: some Collection<UInt8>) throws(CryptoKeyError) {
        guard x.count == 32, y.count == 32,
            let xValue = UInt256(bigEndianBytes: x), let yValue = UInt256(bigEndianBytes: y)
        else {
            throw CryptoKeyError("coordinate not 32 bytes")
        }
        let prime = P256Point.coordinateField.modulus
        guard xValue < prime, yValue < prime else { throw CryptoKeyError("coordinate not below the field prime") }
        guard P256Point.isOnCurve(affineX: xValue, affineY: yValue) else {
            throw CryptoKeyError("point not on the curve")
        }
        affineX = xValue
        affineY = yValue
    }

    /// Whether `rawSignature` is this key's ECDSA P-256 SHA-256 signature of `message`.
    ///
    /// The signature is `r ‖ s` (IEEE P1363, JWS's `ES256` encoding), exactly 64 bytes, with `r`
    /// and `s` in `[1, n − 1]`. A signature with a high `s` verifies (ECDSA does not forbid it).
    ///
    /// - Parameters:
    ///   - rawSignature: `r ‖ s`, each 32 bytes big-endian.
    ///   - message: The signed bytes (JWS's signing input).
    /// - Returns: Whether it verifies.
    package func isValidSignature(_ rawSignature: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        guard rawSignature.count == 64 else { return false }
        let bytes = Array(rawSignature)
        guard let r = UInt256(bigEndianBytes: bytes[0..<32]), let s = UInt256(bigEndianBytes: bytes[32..<64]) else {
            return false
        }
        let scalars = P256Point.scalarField
        guard !r.isZero, r < scalars.modulus, !s.isZero, s < scalars.modulus else { return false }

        // e: the digest's 256 bits as an integer, reduced modulo n (n has 256 bits: no truncation).
        guard let digest = UInt256(bigEndianBytes: SHA256.hash(message)) else { return false }
        let e = scalars.element(digest)
        let w = scalars.inverse(of: scalars.element(s))
        let u1 = scalars.integer(scalars.multiply(e, w))
        let u2 = scalars.integer(scalars.multiply(scalars.element(r), w))
        let sum = P256Point.generatorMultiple(u1, plus: u2, times: P256Point(affineX: affineX, affineY: affineY))
        guard let (x, _) = sum.affineCoordinates else { return false }
        return scalars.reduced(x) == r
    }
}
