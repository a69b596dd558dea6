import AuthSessionJOSE
import AuthSessionMocks
import Testing

/// ``RSAPublicKey``'s refusals, and round trips with the test kit's ``RSASigningKey``.
@Suite(.disabled(if: isThreadSanitized, "pure computation, no thread to watch: plain swift test runs it"))
struct RSAKeyTests {

    private let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0".utf8)

    /// Python's `cryptography` (OpenSSL) signing `message` with `testKeyA`: PKCS#1 v1.5 is
    /// deterministic, so the test kit must produce these very bytes.
    private let knownSignature = """
        72245f0e9531457ee28d7bbf073346db0c4c086ccb0dd89eb3014db0750718762ba05c4c3f0b8c48cd9c1ad05b2995678f4df20e31\
        704f06008dd78fcd3529f407fb88f0b5556108ccf3c2a9c580aa022fbbb24a00597b7ca25263d24b3096d11b3fa78605a931cf4499\
        dc0b73acfa5fffea52d9def1ba8cd3a27299ad5fdcc5c6973292140ea807eaffe66e304795197a6af49e6e61bb2f08ae609c27ff15\
        e739572ca9072b400d106003f20f6038f89992064932dcea593af1abd9b82fd039a089574995b1fb3e7039a986b9112cc5d29e5185\
        78d425876164a85b5b0d5c0b330456c24f433af45e90e077200d74eda20c049a6909b373b4c995f229f88c86
        """

    @Test("the test kit's signature is OpenSSL's, and verifies")
    func knownAnswer() throws {
        let key = RSASigningKey.testKeyA
        let signature = key.signature(for: message)
        #expect(CryptoFixtures.hexadecimal(signature) == knownSignature)
        #expect(key.publicKey.isValidPKCS1v15SHA256Signature(signature, for: message))
        #expect(key.publicKey.modulusBitCount == 2048)
        #expect(key.publicKey.modulusByteCount == 256)
        #expect(key.publicExponent == [0x01, 0x00, 0x01])
        #expect(key.modulus.count == 256)
    }

    @Test("a flipped message bit, a flipped signature bit, or another key is refused")
    func forgeriesAreRefused() {
        let key = RSASigningKey.testKeyA
        let signature = key.signature(for: message)
        for bit in [0, 7, 100, message.count * 8 - 1] {
            var altered = message
            altered[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(!key.publicKey.isValidPKCS1v15SHA256Signature(signature, for: altered), "message bit \(bit)")
        }
        for bit in [0, 8, 1000, signature.count * 8 - 1] {
            var altered = signature
            altered[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(!key.publicKey.isValidPKCS1v15SHA256Signature(altered, for: message), "signature bit \(bit)")
        }
        #expect(!RSASigningKey.testKeyB.publicKey.isValidPKCS1v15SHA256Signature(signature, for: message))
        let other = RSASigningKey.testKeyB.signature(for: message)
        #expect(RSASigningKey.testKeyB.publicKey.isValidPKCS1v15SHA256Signature(other, for: message))
        #expect(!key.publicKey.isValidPKCS1v15SHA256Signature(other, for: message))
        #expect(key.publicKey != RSASigningKey.testKeyB.publicKey)
    }

    @Test("a signature of the wrong length, zero, or not below the modulus is refused")
    func malformedSignaturesAreRefused() {
        let key = RSASigningKey.testKeyA.publicKey
        let signature = RSASigningKey.testKeyA.signature(for: message)
        #expect(!key.isValidPKCS1v15SHA256Signature([0] + signature, for: message))
        #expect(!key.isValidPKCS1v15SHA256Signature(signature.dropFirst(), for: message))
        #expect(!key.isValidPKCS1v15SHA256Signature([], for: message))
        #expect(!key.isValidPKCS1v15SHA256Signature([UInt8](repeating: 0, count: 256), for: message))
        // s = n and s = n + signature would each be s mod n = a valid signature, were they reduced.
        let modulus = RSASigningKey.testKeyA.modulus
        #expect(!key.isValidPKCS1v15SHA256Signature(modulus, for: message))
        #expect(!key.isValidPKCS1v15SHA256Signature([UInt8](repeating: 0xFF, count: 256), for: message))
    }

    @Test("leading zero bytes in the modulus and the exponent are ignored")
    func leadingZeros() throws {
        let key = RSASigningKey.testKeyA
        let padded = try RSAPublicKey(modulus: [0, 0] + key.modulus, exponent: [0, 0, 0] + key.publicExponent)
        #expect(padded == key.publicKey)
        #expect(padded.hashValue == key.publicKey.hashValue)
        #expect(padded.modulusBitCount == 2048)
        #expect(padded.isValidPKCS1v15SHA256Signature(key.signature(for: message), for: message))
    }

    @Test("moduli from 2048 to 8192 bits are accepted")
    func modulusSizeBounds() throws {
        for bits in [2048, 2049, 3071, 4096, 8191, 8192] {
            let key = try RSAPublicKey(modulus: oddNumber(bits: bits), exponent: [0x01, 0x00, 0x01])
            #expect(key.modulusBitCount == bits)
            #expect(key.modulusByteCount == (bits + 7) / 8)
        }
    }

    @Test(
        "keys outside the bounds are refused, with the reason",
        arguments: [
            (2047, [0x01, 0x00, 0x01], "modulus shorter than 2048 bits"),
            (1024, [0x01, 0x00, 0x01], "modulus shorter than 2048 bits"),
            (8193, [0x01, 0x00, 0x01], "modulus longer than 8192 bits"),
            (2048, [0x01, 0x00, 0x00], "exponent is even"),
            (2048, [0x02], "exponent below 3"),
            (2048, [0x01], "exponent below 3"),
            (2048, [0x00], "exponent below 3"),
            (2048, [], "exponent below 3"),
            (2048, [0x01, 0, 0, 0, 0, 0, 0, 0, 0x01], "exponent longer than 64 bits"),
        ] as [(Int, [UInt8], String)]
    )
    func refusals(bits: Int, exponent: [UInt8], reason: String) {
        #expect(throws: CryptoKeyError(reason)) {
            try RSAPublicKey(modulus: oddNumber(bits: bits), exponent: exponent)
        }
    }

    @Test("an even modulus, and an empty one, are refused")
    func evenModulus() {
        var modulus = oddNumber(bits: 2048)
        modulus[modulus.count - 1] &-= 1
        #expect(throws: CryptoKeyError("modulus is even")) { try RSAPublicKey(modulus: modulus, exponent: [3]) }
        #expect(throws: CryptoKeyError("modulus shorter than 2048 bits")) {
            try RSAPublicKey(modulus: [], exponent: [3])
        }
    }

    @Test("the smallest and largest exponents accepted: 3 and 2^64 − 1")
    func exponentBounds() throws {
        #expect(try RSAPublicKey(modulus: oddNumber(bits: 2048), exponent: [3]).exponent == BigUInt(3))
        let largest = try RSAPublicKey(modulus: oddNumber(bits: 2048), exponent: [UInt8](repeating: 0xFF, count: 8))
        #expect(largest.exponent == BigUInt(UInt64.max))
    }

    @Test("a signing key's private exponent must be in [1, n − 1] and match e")
    func signingKeyRefusals() {
        let a = RSASigningKey.testKeyA
        let b = RSASigningKey.testKeyB
        #expect(throws: CryptoKeyError("private exponent not in [1, n − 1]")) {
            try RSASigningKey(modulus: a.modulus, publicExponent: a.publicExponent, privateExponent: [0])
        }
        #expect(throws: CryptoKeyError("private exponent not in [1, n − 1]")) {
            try RSASigningKey(modulus: a.modulus, publicExponent: a.publicExponent, privateExponent: a.modulus)
        }
        #expect(throws: CryptoKeyError("private exponent does not match the public key")) {
            try RSASigningKey(
                modulus: a.modulus,
                publicExponent: a.publicExponent,
                privateExponent: [0x01, 0x00, 0x01]
            )
        }
        #expect(throws: CryptoKeyError("modulus shorter than 2048 bits")) {
            try RSASigningKey(modulus: [0xFF], publicExponent: b.publicExponent, privateExponent: [1])
        }
    }

    @Test("a key error's description is its short reason")
    func errorDescription() {
        #expect(CryptoKeyError("modulus is even").description == "modulus is even")
    }

    /// An odd number of exactly `bits` bits (top and bottom bits set), big-endian.
    private func oddNumber(bits: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xA5, count: (bits + 7) / 8)
        let topBits = bits - (bytes.count - 1) * 8
        bytes[0] = UInt8(truncatingIfNeeded: (1 << topBits) - 1) & 0xA5 | UInt8(truncatingIfNeeded: 1 << (topBits - 1))
        bytes[bytes.count - 1] |= 1
        return bytes
    }
}
