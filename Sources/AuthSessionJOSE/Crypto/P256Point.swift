/// A point of the NIST P-256 curve `y² = x³ − 3x + b` over the prime field of
/// `p = 2^256 − 2^224 + 2^192 + 2^96 − 1` (SEC 2 §2.4.2, FIPS 186-4 §D.1.2.3), in Jacobian
/// coordinates, with the curve's constants and the arithmetic ECDSA needs.
///
/// `(X, Y, Z)` stands for the affine point `(X/Z², Y/Z³)`; `Z = 0` is the point at infinity.
/// Coordinates are elements of ``coordinateField`` (Montgomery form). Addition handles every
/// special case (either operand at infinity, `P + P`, `P + (−P)`), as verification must for a
/// hostile signature. Not constant-time: for verification (public data) and the test kit.
///
/// All operations are thread-safe.
package struct P256Point: Sendable {

    /// `X`, an element of ``coordinateField``.
    package var x: UInt256
    /// `Y`, an element of ``coordinateField``.
    package var y: UInt256
    /// `Z`, an element of ``coordinateField``; zero at infinity.
    package var z: UInt256

    /// Arithmetic modulo the field prime `p`.
    package static let coordinateField = PrimeField256(
        modulus: UInt256(0xFFFF_FFFF_0000_0001, 0x0000_0000_0000_0000, 0x0000_0000_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF)
    )

    /// Arithmetic modulo the group order `n` (prime; the cofactor is 1).
    package static let scalarField = PrimeField256(
        modulus: UInt256(0xFFFF_FFFF_0000_0000, 0xFFFF_FFFF_FFFF_FFFF, 0xBCE6_FAAD_A717_9E84, 0xF3B9_CAC2_FC63_2551)
    )

    /// The curve's `b`, as an element of ``coordinateField``.
    private static let curveB = coordinateField.element(
        UInt256(0x5AC6_35D8_AA3A_93E7, 0xB3EB_BD55_7698_86BC, 0x651D_06B0_CC53_B0F6, 0x3BCE_3C3E_27D2_604B)
    )

    /// The base point `G`.
    package static let generator = P256Point(
        affineX: UInt256(0x6B17_D1F2_E12C_4247, 0xF8BC_E6E5_63A4_40F2, 0x7703_7D81_2DEB_33A0, 0xF4A1_3945_D898_C296),
        affineY: UInt256(0x4FE3_42E2_FE1A_7F9B, 0x8EE7_EB4A_7C0F_9E16, 0x2BCE_3357_6B31_5ECE, 0xCBB6_4068_37BF_51F5)
    )

    /// The point at infinity, the group's identity.
    package static let infinity = P256Point(x: coordinateField.one, y: coordinateField.one, z: .zero)

    private init(x: UInt256, y: UInt256, z: UInt256) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// The point with affine coordinates `(x, y)`, integers below `p`.
    ///
    /// The caller checks ``isOnCurve(affineX:affineY:)`` first: arithmetic on a point off the
    /// curve computes on another curve (an invalid-curve attack).
    ///
    /// - Parameters:
    ///   - x: The affine x, below `p` (a precondition).
    ///   - y: The affine y, below `p` (a precondition).
    package init(affineX x: UInt256, affineY y: UInt256) {
        let field = Self.coordinateField
        precondition(x < field.modulus && y < field.modulus, "coordinate not below p")
        self.init(x: field.element(x), y: field.element(y), z: field.one)
    }

    /// Whether `(x, y)` satisfies `y² = x³ − 3x + b` with both below `p`.
    ///
    /// - Parameters:
    ///   - x: The affine x, an integer.
    ///   - y: The affine y, an integer.
    package static func isOnCurve(affineX x: UInt256, affineY y: UInt256) -> Bool {
        let field = coordinateField
        guard x < field.modulus, y < field.modulus else { return false }
        let xElement = field.element(x)
        let yElement = field.element(y)
        let three = field.element(UInt256(0, 0, 0, 3))
        // x³ − 3x + b = x·(x² − 3) + b.
        let right = field.add(field.multiply(xElement, field.subtract(field.square(xElement), three)), curveB)
        return field.square(yElement) == right
    }

    /// Whether this is the point at infinity.
    package var isInfinity: Bool { z.isZero }

    /// The affine coordinates as integers below `p`, or nil at infinity.
    package var affineCoordinates: (x: UInt256, y: UInt256)? {
        guard !isInfinity else { return nil }
        let field = Self.coordinateField
        let zInverse = field.inverse(of: z)
        let zInverse2 = field.square(zInverse)
        let zInverse3 = field.multiply(zInverse2, zInverse)
        return (field.integer(field.multiply(x, zInverse2)), field.integer(field.multiply(y, zInverse3)))
    }

    /// `2·self` ("dbl-2001-b", for `a = −3`); infinity doubles to infinity.
    package func doubled() -> P256Point {
        guard !isInfinity else { return self }
        let field = Self.coordinateField
        let delta = field.square(z)
        let gamma = field.square(y)
        let beta = field.multiply(x, gamma)
        let sum = field.add(x, delta)
        let alpha = field.multiply(field.add(field.add(sum, sum), sum), field.subtract(x, delta))
        let beta2 = field.add(beta, beta)
        let beta4 = field.add(beta2, beta2)
        let beta8 = field.add(beta4, beta4)
        let newX = field.subtract(field.square(alpha), beta8)
        let newZ = field.subtract(field.subtract(field.square(field.add(y, z)), gamma), delta)
        let gammaSquared = field.square(gamma)
        let gammaSquared2 = field.add(gammaSquared, gammaSquared)
        let gammaSquared4 = field.add(gammaSquared2, gammaSquared2)
        let gammaSquared8 = field.add(gammaSquared4, gammaSquared4)
        let newY = field.subtract(field.multiply(alpha, field.subtract(beta4, newX)), gammaSquared8)
        // With y = 0 (no such point on P-256: its order is prime) newZ = 2yz = 0, infinity.
        return P256Point(x: newX, y: newY, z: newZ)
    }

    /// `self + other`, for any two points ("add-1998-cmo-2", with its special cases).
    ///
    /// - Parameter other: Any point, this one, its negation or infinity included.
    package func adding(_ other: P256Point) -> P256Point {
        if isInfinity { return other }
        if other.isInfinity { return self }
        let field = Self.coordinateField
        let z1z1 = field.square(z)
        let z2z2 = field.square(other.z)
        let u1 = field.multiply(x, z2z2)
        let u2 = field.multiply(other.x, z1z1)
        let s1 = field.multiply(field.multiply(y, other.z), z2z2)
        let s2 = field.multiply(field.multiply(other.y, z), z1z1)
        let h = field.subtract(u2, u1)
        let r = field.subtract(s2, s1)
        if h.isZero {
            // Same x: the same point (double it) or its negation (the sum is infinity).
            return r.isZero ? doubled() : .infinity
        }
        let hh = field.square(h)
        let hhh = field.multiply(h, hh)
        let v = field.multiply(u1, hh)
        let newX = field.subtract(field.subtract(field.square(r), hhh), field.add(v, v))
        let newY = field.subtract(field.multiply(r, field.subtract(v, newX)), field.multiply(s1, hhh))
        let newZ = field.multiply(field.multiply(z, other.z), h)
        return P256Point(x: newX, y: newY, z: newZ)
    }

    /// `scalar·self`, double and add from the top bit.
    ///
    /// - Parameter scalar: An integer (not reduced: `n·P` is infinity).
    package func multiplied(by scalar: UInt256) -> P256Point {
        var result = P256Point.infinity
        for index in stride(from: 255, through: 0, by: -1) {
            result = result.doubled()
            if scalar.bit(at: index) { result = result.adding(self) }
        }
        return result
    }

    /// `u1·G + u2·q`, the sum ECDSA verification computes (Shamir's trick: one doubling per bit
    /// for both products, with `G + q` precomputed).
    ///
    /// - Parameters:
    ///   - u1: The generator's scalar, an integer.
    ///   - u2: `q`'s scalar, an integer.
    ///   - q: Any point (`±G` and infinity included).
    package static func generatorMultiple(_ u1: UInt256, plus u2: UInt256, times q: P256Point) -> P256Point {
        let both = generator.adding(q)
        var result = P256Point.infinity
        for index in stride(from: 255, through: 0, by: -1) {
            result = result.doubled()
            switch (u1.bit(at: index), u2.bit(at: index)) {
            case (true, true): result = result.adding(both)
            case (true, false): result = result.adding(generator)
            case (false, true): result = result.adding(q)
            case (false, false): break
            }
        }
        return result
    }
}
