import AuthSessionJOSE
import AuthSessionMocks
import Testing

/// ``P256PublicKey``'s refusals, the curve arithmetic's special cases, and round trips with the
/// test kit's ``P256SigningKey``.
@Suite(.disabled(if: isThreadSanitized, "pure computation, no thread to watch: plain swift test runs it"))
struct P256KeyTests {

    private let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0".utf8)

    private static let order = bytes("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
    private static let prime = bytes("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
    private static let generatorX = bytes("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296")
    private static let generatorY = bytes("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")

    /// RFC 6979 §A.2.5: the P-256 key, and its deterministic SHA-256 signatures of "sample" and "test".
    @Test("RFC 6979 A.2.5: the public key from the scalar, and its signatures verify")
    func rfc6979() throws {
        let key = try P256SigningKey(
            scalar: Self.bytes("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721")
        )
        #expect(CryptoFixtures.hexadecimal(key.x) == "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6")
        #expect(CryptoFixtures.hexadecimal(key.y) == "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299")
        let sample = Self.bytes(
            "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
                + "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"
        )
        let test = Self.bytes(
            "f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367"
                + "019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083"
        )
        #expect(key.publicKey.isValidSignature(sample, for: Array("sample".utf8)))
        #expect(key.publicKey.isValidSignature(test, for: Array("test".utf8)))
        #expect(!key.publicKey.isValidSignature(sample, for: Array("test".utf8)))
        let again = try P256PublicKey(x: key.x, y: key.y)
        #expect(again == key.publicKey)
    }

    @Test("sign then verify; a flipped message bit, a flipped signature bit, or another key is refused")
    func roundTrip() {
        let key = P256SigningKey()
        let signature = key.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(key.x.count == 32 && key.y.count == 32)
        for bit in [0, 9, message.count * 8 - 1] {
            var altered = message
            altered[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(!key.publicKey.isValidSignature(signature, for: altered), "message bit \(bit)")
        }
        for bit in [0, 7, 255, 256, 300, 511] {
            var altered = signature
            altered[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(!key.publicKey.isValidSignature(altered, for: message), "signature bit \(bit)")
        }
        let other = P256SigningKey()
        #expect(!other.publicKey.isValidSignature(signature, for: message))
        #expect(other.publicKey != key.publicKey)
        // A fresh k each time: two signatures of one message differ, and both verify.
        let second = key.signature(for: message)
        #expect(second != signature)
        #expect(key.publicKey.isValidSignature(second, for: message))
    }

    @Test("r or s equal to 0 or n, or a signature of another length, is refused")
    func outOfRangeSignatures() {
        let key = P256SigningKey()
        let signature = key.signature(for: message)
        let r = Array(signature[0..<32])
        let s = Array(signature[32..<64])
        let zero = [UInt8](repeating: 0, count: 32)
        for forged in [zero + s, Self.order + s, r + zero, r + Self.order, zero + zero, Self.order + Self.order] {
            #expect(!key.publicKey.isValidSignature(forged, for: message))
        }
        #expect(!key.publicKey.isValidSignature(signature.dropLast(), for: message))
        #expect(!key.publicKey.isValidSignature(signature + [0], for: message))
        #expect(!key.publicKey.isValidSignature([0] + signature, for: message))
        #expect(!key.publicKey.isValidSignature([], for: message))
    }

    @Test("a high s (n − s) verifies too: ECDSA does not forbid it, and Wycheproof calls it valid")
    func highS() throws {
        let key = P256SigningKey()
        let signature = key.signature(for: message)
        let scalars = P256Point.scalarField
        let s = try #require(UInt256(bigEndianBytes: signature[32..<64]))
        let negated = scalars.modulus.subtractingReportingOverflow(s).partialValue
        #expect(key.publicKey.isValidSignature(Array(signature[0..<32]) + negated.bigEndianBytes, for: message))
    }

    @Test("a point off the curve, a coordinate not below p, or another length is refused")
    func invalidPoints() {
        var offCurveY = Self.generatorY
        offCurveY[31] ^= 1
        #expect(throws: CryptoKeyError("point not on the curve")) {
            try P256PublicKey(x: Self.generatorX, y: offCurveY)
        }
        // (0, 0), a common stand-in for the point at infinity, is not on the curve.
        let zero = [UInt8](repeating: 0, count: 32)
        #expect(throws: CryptoKeyError("point not on the curve")) { try P256PublicKey(x: zero, y: zero) }
        #expect(throws: CryptoKeyError("coordinate not below the field prime")) {
            try P256PublicKey(x: Self.prime, y: Self.generatorY)
        }
        // y + p: congruent to a point on the curve, but not a canonical coordinate.
        #expect(throws: CryptoKeyError("coordinate not below the field prime")) {
            try P256PublicKey(x: Self.generatorX, y: [UInt8](repeating: 0xFF, count: 32))
        }
        #expect(throws: CryptoKeyError("coordinate not 32 bytes")) {
            try P256PublicKey(x: [0] + Self.generatorX, y: Self.generatorY)
        }
        #expect(throws: CryptoKeyError("coordinate not 32 bytes")) {
            try P256PublicKey(x: Self.generatorX.dropFirst(), y: Self.generatorY)
        }
        #expect(throws: Never.self) { try P256PublicKey(x: Self.generatorX, y: Self.generatorY) }
    }

    @Test("a signing scalar must be in [1, n − 1]")
    func scalarBounds() throws {
        for scalar in [[], [0], Self.order, [UInt8](repeating: 0xFF, count: 32), [1] + Self.order] {
            #expect(throws: CryptoKeyError("scalar not in [1, n − 1]")) { try P256SigningKey(scalar: scalar) }
        }
        let one = try P256SigningKey(scalar: [1])
        #expect(one.x == Self.generatorX && one.y == Self.generatorY)
        // (n − 1)·G = −G = (Gx, p − Gy).
        var orderMinusOne = Self.order
        orderMinusOne[31] -= 1
        let minusOne = try P256SigningKey(scalar: orderMinusOne)
        let prime = try #require(UInt256(bigEndianBytes: Self.prime))
        let gy = try #require(UInt256(bigEndianBytes: Self.generatorY))
        #expect(minusOne.x == Self.generatorX)
        #expect(minusOne.y == prime.subtractingReportingOverflow(gy).partialValue.bigEndianBytes)
        #expect(minusOne.publicKey.isValidSignature(minusOne.signature(for: message), for: message))
    }

    @Test("point addition's special cases: P + P, P + (−P), infinity, n·G, and G ± Q in the double sum")
    func pointArithmetic() throws {
        let g = P256Point.generator
        let two = g.multiplied(by: UInt256(0, 0, 0, 2))
        #expect(same(g.adding(g), two))
        #expect(same(g.doubled(), two))
        let order = try #require(UInt256(bigEndianBytes: Self.order))
        let minusOne = order.subtractingReportingOverflow(.one).partialValue
        let negativeG = g.multiplied(by: minusOne)
        #expect(g.adding(negativeG).isInfinity)
        #expect(negativeG.adding(g).isInfinity)
        #expect(g.multiplied(by: order).isInfinity)
        #expect(g.multiplied(by: .zero).isInfinity)
        #expect(same(P256Point.infinity.adding(g), g))
        #expect(same(g.adding(.infinity), g))
        #expect(P256Point.infinity.doubled().isInfinity)
        #expect(P256Point.infinity.affineCoordinates == nil)

        let three = UInt256(0, 0, 0, 3)
        let five = UInt256(0, 0, 0, 5)
        let eight = UInt256(0, 0, 0, 8)
        // 3·G + 5·G (q = G: the precomputed G + q is a doubling).
        #expect(same(P256Point.generatorMultiple(three, plus: five, times: g), g.multiplied(by: eight)))
        // 3·G + 3·(−G) = infinity (q = −G: the precomputed G + q is infinity).
        #expect(P256Point.generatorMultiple(three, plus: three, times: negativeG).isInfinity)
        // 5·G + 3·(−G) = 2·G.
        #expect(same(P256Point.generatorMultiple(five, plus: three, times: negativeG), two))
        // u·G + v·(2G) for a large u, v: (u + 2v)·G.
        let u = try #require(UInt256(bigEndianBytes: Self.bytes(String(repeating: "5a", count: 32))))
        let v = UInt256(0, 0, 1, 0)
        let sum = P256Point.scalarField.reduced(
            u.addingReportingOverflow(v.addingReportingOverflow(v).partialValue).partialValue
        )
        #expect(same(P256Point.generatorMultiple(u, plus: v, times: two), g.multiplied(by: sum)))
        // Infinity as q.
        #expect(same(P256Point.generatorMultiple(five, plus: three, times: .infinity), g.multiplied(by: five)))
    }

    private func same(_ a: P256Point, _ b: P256Point) -> Bool {
        guard let first = a.affineCoordinates, let second = b.affineCoordinates else {
            return a.isInfinity && b.isInfinity
        }
        return first.x == second.x && first.y == second.y
    }

    private static func bytes(_ hexadecimal: String) -> [UInt8] {
        CryptoFixtures.bytes(hexadecimal: hexadecimal) ?? []
    }
}
