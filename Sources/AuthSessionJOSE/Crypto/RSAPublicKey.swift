/// An RSA public key that verifies RSASSA-PKCS1-v1_5 signatures with SHA-256: JWS `RS256`
/// (RFC 7518 §3.3, RFC 8017 §8.2.2).
///
/// The modulus is 2048 to 8192 bits: RFC 7518 §3.3 demands at least 2048 for `RS256`, and the
/// upper bound caps what one key can cost (8192 bits with a 64-bit exponent: a few milliseconds;
/// a hostile key set of 100 such keys tried for a token without `kid`: about half a second). The
/// exponent is odd, 3 or more, and at most 64 bits (65537 in practice).
///
/// Verification compares the whole decrypted block with the one encoding the message allows; it
/// never parses ASN.1 (parsing is where Bleichenbacher-style forgeries come from). Not
/// constant-time: it uses public data only.
///
/// All operations are thread-safe.
package struct RSAPublicKey: Sendable, Hashable {

    /// The modulus `n`, with its Montgomery precomputation.
    package let arithmetic: MontgomeryModulus

    /// The public exponent `e`.
    package let exponent: BigUInt

    /// The smallest modulus accepted, in bits.
    package static let minimumModulusBitCount = 2048

    /// The largest modulus accepted, in bits.
    package static let maximumModulusBitCount = 8192

    /// The DER encoding of `DigestInfo` for SHA-256, up to the digest (RFC 8017 §9.2, note 1).
    private static let sha256DigestInfoPrefix: [UInt8] = [
        0x30, 0x31,  // SEQUENCE, 49 bytes: DigestInfo
        0x30, 0x0d,  // SEQUENCE, 13 bytes: AlgorithmIdentifier
        0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,  // OID 2.16.840.1.101.3.4.2.1, SHA-256
        0x05, 0x00,  // NULL parameters
        0x04, 0x20,  // OCTET STRING, 32 bytes: the digest follows
    ]

    /// A key with the given modulus and public exponent.
    ///
    /// - Parameters:
    ///   - modulus: `n`, big-endian; leading zero bytes are allowed (and ignored).
    ///   - exponent: `e`, big-endian; leading zero bytes are allowed (and ignored).
    /// - Throws: ``CryptoKeyError`` for a modulus under 2048 or over 8192 bits, an even modulus,
    ///   or an exponent that is even, under 3, over 64 bits, or not below the modulus.
    package init(modulus: some Collection<UInt8>, exponent: some Collection<UInt8>) throws(CryptoKeyError) {
        // Length checks before any allocation that the input's size decides.
        let modulusBytes = modulus.drop { $0 == 0 }
        let exponentBytes = exponent.drop { $0 == 0 }
        guard modulusBytes.count <= Self.maximumModulusBitCount / 8 else {
            throw CryptoKeyError("modulus longer than \(Self.maximumModulusBitCount) bits")
        }
        guard exponentBytes.count <= 8 else { throw CryptoKeyError("exponent longer than 64 bits") }
        let n = BigUInt(bigEndianBytes: modulusBytes)
        let e = BigUInt(bigEndianBytes: exponentBytes)
        guard n.significantBitCount >= Self.minimumModulusBitCount else {
            throw CryptoKeyError("modulus shorter than \(Self.minimumModulusBitCount) bits")
        }
        guard n.isOdd else { throw CryptoKeyError("modulus is even") }
        guard e >= BigUInt(3) else { throw CryptoKeyError("exponent below 3") }
        guard e.isOdd else { throw CryptoKeyError("exponent is even") }
        guard e < n else { throw CryptoKeyError("exponent not below the modulus") }
        arithmetic = MontgomeryModulus(n)
        self.exponent = e
    }

    /// The modulus `n`.
    package var modulus: BigUInt { arithmetic.modulus }

    /// The modulus's length in bits.
    package var modulusBitCount: Int { modulus.significantBitCount }

    /// The modulus's length in bytes, `k`: the length of every signature.
    package var modulusByteCount: Int { (modulusBitCount + 7) / 8 }

    /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `message`
    /// (RFC 8017 §8.2.2).
    ///
    /// The signature must be exactly ``modulusByteCount`` bytes and, as an integer, below the
    /// modulus. `s^e mod n`, written in `k` bytes, must equal byte for byte the one encoding
    /// `00 01 FF…FF 00 ‖ DER(DigestInfo{sha256, NULL}) ‖ SHA-256(message)`. So an encoding
    /// that omits the `NULL` parameters, which RFC 8017 §9.2 note 2 lets verifiers accept and
    /// Wycheproof marks "acceptable" (flag `MissingNull`), is refused: no issuer this package
    /// talks to produces it, and one comparison leaves no parser to fool.
    ///
    /// - Parameters:
    ///   - signature: The signature, big-endian (JWS's third part, decoded).
    ///   - message: The signed bytes (JWS's signing input).
    /// - Returns: Whether it verifies.
    package func isValidPKCS1v15SHA256Signature(
        _ signature: some Collection<UInt8>,
        for message: some Collection<UInt8>
    ) -> Bool {
        let length = modulusByteCount
        guard signature.count == length else { return false }
        let s = BigUInt(bigEndianBytes: signature)
        guard s < modulus else { return false }
        let m = arithmetic.power(s, exponent)
        return m.bigEndianBytes(count: length) == pkcs1v15SHA256EncodedMessage(for: message)
    }

    /// The EMSA-PKCS1-v1_5 encoding of `message` with SHA-256 (RFC 8017 §9.2), ``modulusByteCount``
    /// bytes: what a signature must decrypt to, and what a signer exponentiates.
    ///
    /// - Parameter message: The bytes to sign.
    /// - Returns: `00 01 FF…FF 00 ‖ DER(DigestInfo{sha256, NULL}) ‖ SHA-256(message)`.
    package func pkcs1v15SHA256EncodedMessage(for message: some Collection<UInt8>) -> [UInt8] {
        let length = modulusByteCount
        let suffixLength = Self.sha256DigestInfoPrefix.count + SHA256.digestByteCount
        var encoded: [UInt8] = [0x00, 0x01]
        encoded.reserveCapacity(length)
        // At least 202 bytes of FF: the modulus has 256 bytes or more.
        encoded.append(contentsOf: repeatElement(0xFF, count: length - 3 - suffixLength))
        encoded.append(0x00)
        encoded.append(contentsOf: Self.sha256DigestInfoPrefix)
        encoded.append(contentsOf: SHA256.hash(message))
        return encoded
    }

    /// Keys are equal when their moduli and exponents are.
    package static func == (lhs: RSAPublicKey, rhs: RSAPublicKey) -> Bool {
        lhs.modulus == rhs.modulus && lhs.exponent == rhs.exponent
    }

    /// Hashes the modulus and the exponent.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(modulus)
        hasher.combine(exponent)
    }
}
