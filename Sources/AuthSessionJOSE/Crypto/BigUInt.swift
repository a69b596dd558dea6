/// An unsigned integer of any size, held as 64-bit limbs: what an RSA modulus, exponent or
/// signature is read into, and what ``MontgomeryModulus`` computes with.
///
/// Only what RSA needs is here: reading and writing big-endian bytes, comparing, and reading
/// bits. The arithmetic lives in ``MontgomeryModulus``.
///
/// All operations are thread-safe.
package struct BigUInt: Sendable, Hashable, Comparable {

    /// The limbs, least significant first, with no zero limb at the top (zero has none).
    package private(set) var limbs: [UInt64]

    /// The integer whose limbs, least significant first, are `limbs` (zero limbs at the top are
    /// dropped).
    ///
    /// - Parameter limbs: The limbs, least significant first.
    package init(limbs: [UInt64]) {
        var limbs = limbs
        while limbs.last == 0 { limbs.removeLast() }
        self.limbs = limbs
    }

    /// The integer `value`.
    ///
    /// - Parameter value: The value.
    package init(_ value: UInt64) {
        self.init(limbs: [value])
    }

    /// The integer whose big-endian bytes are `bytes` (leading zero bytes allowed).
    ///
    /// - Parameter bytes: The bytes, most significant first; empty is zero.
    package init(bigEndianBytes bytes: some Collection<UInt8>) {
        var limbs = [UInt64](repeating: 0, count: (bytes.count + 7) / 8)
        // The last byte is bit 0: count positions from the end.
        var position = bytes.count
        for byte in bytes {
            position -= 1
            limbs[position / 8] |= UInt64(byte) << UInt64(8 * (position % 8))
        }
        self.init(limbs: limbs)
    }

    /// Whether the integer is zero.
    package var isZero: Bool { limbs.isEmpty }

    /// Whether the integer is odd.
    package var isOdd: Bool { (limbs.first ?? 0) & 1 == 1 }

    /// The number of bits up to and including the most significant one bit (0 for zero).
    package var significantBitCount: Int {
        guard let top = limbs.last else { return 0 }
        return limbs.count * 64 - top.leadingZeroBitCount
    }

    /// Whether bit `index` (0 is the least significant) is one.
    ///
    /// - Parameter index: A bit position, 0 or more; positions past the top read as zero.
    package func bit(at index: Int) -> Bool {
        let limb = index / 64
        guard limb < limbs.count else { return false }
        return (limbs[limb] >> UInt64(index % 64)) & 1 == 1
    }

    /// The integer as exactly `count` big-endian bytes (I2OSP, RFC 8017 §4.1).
    ///
    /// - Parameter count: The length; the integer must fit in it (a precondition).
    /// - Returns: The bytes, zero-padded on the left.
    package func bigEndianBytes(count: Int) -> [UInt8] {
        precondition(significantBitCount <= count * 8, "integer too large for \(count) bytes")
        var bytes = [UInt8](repeating: 0, count: count)
        for position in 0..<min(count, limbs.count * 8) {
            bytes[count - 1 - position] = UInt8(truncatingIfNeeded: limbs[position / 8] >> UInt64(8 * (position % 8)))
        }
        return bytes
    }

    /// Compares magnitudes.
    package static func < (lhs: BigUInt, rhs: BigUInt) -> Bool {
        if lhs.limbs.count != rhs.limbs.count { return lhs.limbs.count < rhs.limbs.count }
        for index in lhs.limbs.indices.reversed() where lhs.limbs[index] != rhs.limbs[index] {
            return lhs.limbs[index] < rhs.limbs[index]
        }
        return false
    }
}
