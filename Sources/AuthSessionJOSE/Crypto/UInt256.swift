/// A 256-bit unsigned integer in four 64-bit limbs, stored inline: a P-256 coordinate or scalar.
///
/// Fixed-size so that the curve arithmetic in ``PrimeField256`` allocates nothing.
///
/// All operations are thread-safe.
package struct UInt256: Sendable, Hashable, Comparable {

    /// Bits 0 to 63.
    package var limb0: UInt64
    /// Bits 64 to 127.
    package var limb1: UInt64
    /// Bits 128 to 191.
    package var limb2: UInt64
    /// Bits 192 to 255.
    package var limb3: UInt64

    /// Zero.
    package static let zero = UInt256(0, 0, 0, 0)

    /// One.
    package static let one = UInt256(0, 0, 0, 1)

    /// The integer with the given limbs, **most significant first**, as a hexadecimal constant
    /// reads.
    ///
    /// - Parameters:
    ///   - limb3: Bits 192 to 255.
    ///   - limb2: Bits 128 to 191.
    ///   - limb1: Bits 64 to 127.
    ///   - limb0: Bits 0 to 63.
    package init(_ limb3: UInt64, _ limb2: UInt64, _ limb1: UInt64, _ limb0: UInt64) {
        self.limb0 = limb0
        self.limb1 = limb1
        self.limb2 = limb2
        self.limb3 = limb3
    }

    /// The integer whose big-endian bytes are `bytes`, or nil for more than 32 bytes.
    ///
    /// - Parameter bytes: At most 32 bytes, most significant first.
    package init?(bigEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count <= 32 else { return nil }
        var limbs: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for byte in bytes {
            limbs.0 = limbs.0 << 8 | limbs.1 >> 56
            limbs.1 = limbs.1 << 8 | limbs.2 >> 56
            limbs.2 = limbs.2 << 8 | limbs.3 >> 56
            limbs.3 = limbs.3 << 8 | UInt64(byte)
        }
        self.init(limbs.0, limbs.1, limbs.2, limbs.3)
    }

    /// The integer as 32 big-endian bytes.
    package var bigEndianBytes: [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        for limb in [limb3, limb2, limb1, limb0] {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift)))
            }
        }
        return bytes
    }

    /// Whether the integer is zero.
    package var isZero: Bool { (limb0 | limb1 | limb2 | limb3) == 0 }

    /// Whether bit `index` (0 to 255, 0 the least significant) is one.
    ///
    /// - Parameter index: A bit position below 256 (a precondition).
    package func bit(at index: Int) -> Bool {
        precondition((0..<256).contains(index), "bit index out of range")
        let limb: UInt64
        switch index / 64 {
        case 0: limb = limb0
        case 1: limb = limb1
        case 2: limb = limb2
        default: limb = limb3
        }
        return (limb >> UInt64(index % 64)) & 1 == 1
    }

    /// `self + other mod 2^256`, and whether it wrapped.
    ///
    /// - Parameter other: The addend.
    /// - Returns: The low 256 bits of the sum, and the carry out.
    @inline(__always)
    package func addingReportingOverflow(_ other: UInt256) -> (partialValue: UInt256, overflow: Bool) {
        let (s0, c0) = limb0.addingReportingOverflow(other.limb0)
        let (s1, c1) = Self.add(limb1, other.limb1, c0)
        let (s2, c2) = Self.add(limb2, other.limb2, c1)
        let (s3, c3) = Self.add(limb3, other.limb3, c2)
        return (UInt256(s3, s2, s1, s0), c3)
    }

    /// `self − other mod 2^256`, and whether it wrapped.
    ///
    /// - Parameter other: The subtrahend.
    /// - Returns: The difference modulo 2^256, and the borrow out.
    @inline(__always)
    package func subtractingReportingOverflow(_ other: UInt256) -> (partialValue: UInt256, overflow: Bool) {
        let (d0, b0) = limb0.subtractingReportingOverflow(other.limb0)
        let (d1, b1) = Self.subtract(limb1, other.limb1, b0)
        let (d2, b2) = Self.subtract(limb2, other.limb2, b1)
        let (d3, b3) = Self.subtract(limb3, other.limb3, b2)
        return (UInt256(d3, d2, d1, d0), b3)
    }

    /// Compares magnitudes.
    package static func < (lhs: UInt256, rhs: UInt256) -> Bool {
        if lhs.limb3 != rhs.limb3 { return lhs.limb3 < rhs.limb3 }
        if lhs.limb2 != rhs.limb2 { return lhs.limb2 < rhs.limb2 }
        if lhs.limb1 != rhs.limb1 { return lhs.limb1 < rhs.limb1 }
        return lhs.limb0 < rhs.limb0
    }

    @inline(__always)
    private static func add(_ a: UInt64, _ b: UInt64, _ carry: Bool) -> (UInt64, Bool) {
        let (s, c1) = a.addingReportingOverflow(b)
        let (t, c2) = s.addingReportingOverflow(carry ? 1 : 0)
        return (t, c1 || c2)
    }

    @inline(__always)
    private static func subtract(_ a: UInt64, _ b: UInt64, _ borrow: Bool) -> (UInt64, Bool) {
        let (d, b1) = a.subtractingReportingOverflow(b)
        let (e, b2) = d.subtractingReportingOverflow(borrow ? 1 : 0)
        return (e, b1 || b2)
    }
}
