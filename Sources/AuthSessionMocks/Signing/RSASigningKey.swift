import AuthSessionProviders

/// An RSA private key that signs RSASSA-PKCS1-v1_5 with SHA-256 (JWS `RS256`), for a simulated
/// identity provider in tests.
///
/// **For tests only**: signing is `m^d mod n` without the Chinese remainder theorem (a few
/// milliseconds in a release build, more in a debug one), not constant-time, and nothing protects
/// the private exponent in memory. ``testKeyA`` and ``testKeyB`` are published keys.
///
/// All operations are thread-safe.
package struct RSASigningKey: Sendable {

    /// The public key, `(n, e)`.
    package let publicKey: RSAPublicKey

    /// The private exponent `d`.
    private let privateExponent: BigUInt

    /// The key with the given modulus and exponents.
    ///
    /// - Parameters:
    ///   - modulus: `n`, big-endian; 2048 to 8192 bits, odd (as ``RSAPublicKey`` requires).
    ///   - publicExponent: `e`, big-endian.
    ///   - privateExponent: `d`, big-endian.
    /// - Throws: ``CryptoKeyError`` for a public key ``RSAPublicKey`` refuses, a private exponent
    ///   not in `[1, n − 1]`, or one that does not undo the public exponent.
    package init(
        modulus: some Collection<UInt8>,
        publicExponent: some Collection<UInt8>,
        privateExponent: some Collection<UInt8>
    ) throws(CryptoKeyError) {
        let publicKey = try RSAPublicKey(modulus: modulus, exponent: publicExponent)
        let d = BigUInt(bigEndianBytes: privateExponent)
        guard !d.isZero, d < publicKey.modulus else { throw CryptoKeyError("private exponent not in [1, n − 1]") }
        // (2^d)^e must be 2 again: a mismatched d would sign what no key verifies.
        let two = BigUInt(2)
        guard publicKey.arithmetic.power(publicKey.arithmetic.power(two, d), publicKey.exponent) == two else {
            throw CryptoKeyError("private exponent does not match the public key")
        }
        self.publicKey = publicKey
        self.privateExponent = d
    }

    /// The modulus `n`, big-endian, without leading zero bytes (a JWK's `n`, before base64url).
    package var modulus: [UInt8] {
        publicKey.modulus.bigEndianBytes(count: publicKey.modulusByteCount)
    }

    /// The public exponent `e`, big-endian, without leading zero bytes (a JWK's `e`, before
    /// base64url: `01 00 01` for 65537).
    package var publicExponent: [UInt8] {
        publicKey.exponent.bigEndianBytes(count: (publicKey.exponent.significantBitCount + 7) / 8)
    }

    /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (RFC 8017 §8.2.1): the encoded
    /// message to the power `d`, in exactly as many bytes as the modulus.
    ///
    /// - Parameter message: The bytes to sign (JWS's signing input).
    /// - Returns: The signature, big-endian.
    package func signature(for message: some Collection<UInt8>) -> [UInt8] {
        // The encoding starts 00 01: below n, whose top byte is at least 01 and which is longer.
        let encoded = BigUInt(bigEndianBytes: publicKey.pkcs1v15SHA256EncodedMessage(for: message))
        return publicKey.arithmetic.power(encoded, privateExponent).bigEndianBytes(count: publicKey.modulusByteCount)
    }

    // A published 2048-bit test key (e = 65537), made for this test kit with Python's
    // `cryptography` package. Its private exponent is public: it is a TEST KEY, never for anything
    // else.

    /// A fixed 2048-bit test key: **public, for tests only**.
    package static let testKeyA = fixedTestKey(
        modulus: """
            b5981361804b79c3d42e8b334a63c55d1d0cb00b303933e9a54b2e572dd8e4e7\
            572ff791df94d8e5b7a515cb6b262f048271505f487ac38c2fe10031b8e2b52a\
            9a4d9462f2e9ab65bc0bd3233c84a3134f97c9cd5f556422a889a908de7285eb\
            e529dc7845e6093bd79ce0249d6ee917311898e68b918d5befd0aa2a761d4a87\
            d5333109d0b605b75071e7d8ee1d821ca2f2a84691effc22168051ff56c04165\
            539c3a965a1cb795b7ac1cf20b21fade479bb5100fd86ff72e6573a2e5a5e2f8\
            1e56f6c4d838b6e316c27937a0121ab807ae806b7bbe446ac68d810882e8e2d4\
            83e294f987553e33e3b5d98a6b2a2b02c895839aed7ba3c70c9fc7885598df5f
            """,
        privateExponent: """
            522da207aba17c572cbc6b6e28aa01f4e3628c8063b05f57cadfbcf6e2de96a8\
            4282888cd11b711474091755d9058c9d83d277c6c6ec1776676c71440f21394f\
            30490f6fbff213089512dcd7c3595adb3057c6915425368da0abbb7d31fdadb1\
            55219e8e2743b4c60a0b0a3c47aa9b7d4d508e5136b405bea7464cdbae5c0f0f\
            a862ce9cfb65c3eac82325c13bf02ab6d4b3a8e83afdeb7811cb6d899341d48a\
            f21d6ba19995479e405f125c2bdd829fa5934ef3732f41d0a4c95bc2a314e6cd\
            bbe275b77b890cc26ef0cfec717d195aa21b026c04fc059c2243fb6a56fb1266\
            a76027e6610361c45368fde0c5429815c114421eed1c0dbf1771314a0e2e4681
            """
    )

    /// A second fixed 2048-bit test key, unrelated to ``testKeyA``: **public, for tests only**.
    package static let testKeyB = fixedTestKey(
        modulus: """
            a86af7fb9e1112c15e4851ac73f4eadeeba48f11765b53653383bdd4a1e373fc\
            5ad79390c067da5c22e3f3e6f01a8169b390b296620e0eb09802bd0f0e11fd1f\
            4f224635589ce78979c4bc76320d9050dd95a90ec7394ae885069473d7ea62d2\
            12f4d853550c90ace6171021da1f2ba941ac1cc3a13add290e3ecc42bc9156a9\
            ca6b04dd6aee2dd9e7968609b46e5b1f51f5ac5115d935c9e25b382095c3b3e0\
            c9994f5d3510b251cd73e50cc3c0607ad942f53e145888690434fc2b196e1e10\
            817664f914b50e926d2f574d2806ed484f62ef73e2393866ea6ac59509272cdf\
            f69bd77be9274f3ba92f15810300e0c0a6ac03e3cd5e1da9a4e093ae2210d17d
            """,
        privateExponent: """
            0ab9a1282b653ff2037c8c82f47174e194550aed5c41ad9a64c0ef7e527ee71c\
            7b767e05ba5302c35a4f74f1507a07a2c116266150463fe63c0ff495385aa9e9\
            6c032d40696fb888f731b1a4bf4440dbfd7871e72885bc00f9b3b511797f0a23\
            01a508ffa98b5ecd3bebdd11a2cfd85a737dafe93f63bdc0c710f5b60c471f23\
            1f4cc035c4c4ad8cb36bb2ec9dba2364a48c21ecd8734d339af59f3605399096\
            27fe7a751c018afff3d429680401db9565f08cd1d9956e8423e26143e4ca7221\
            09262f2c6cdfef0481a5d422f23c21ca9936c139640a92c8d62bf13b48f78dbb\
            8fc570f320e584ebe76541671e468e4595846c1bc62855c04128e91eaa773d7b
            """
    )

    private static func fixedTestKey(modulus: String, privateExponent: String) -> RSASigningKey {
        do {
            return try RSASigningKey(
                modulus: bytes(hexadecimal: modulus),
                publicExponent: [0x01, 0x00, 0x01],
                privateExponent: bytes(hexadecimal: privateExponent)
            )
        } catch {
            preconditionFailure("a fixed test key is refused: \(error)")
        }
    }

    private static func bytes(hexadecimal text: String) -> [UInt8] {
        let digits = Array(text.utf8).map { digit -> UInt8 in
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            default: preconditionFailure("not a lowercase hexadecimal digit")
            }
        }
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }
}
