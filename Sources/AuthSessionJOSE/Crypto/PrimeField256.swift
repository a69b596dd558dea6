/// Arithmetic modulo a 256-bit prime whose top bit is set, in Montgomery form: P-256's field
/// (coordinates, modulo p) and its group order (scalars, modulo n).
///
/// An element is a ``UInt256`` below the modulus holding `a·R mod m` (`R = 2^256`); ``element(_:)``
/// and ``integer(_:)`` convert. Every operation returns a fully reduced element, so equal
/// elements are equal integers and zero is ``UInt256/zero``. Nothing allocates.
///
/// All operations are thread-safe.
package struct PrimeField256: Sendable {

    /// The modulus `m`.
    package let modulus: UInt256

    /// `-m⁻¹ mod 2^64`.
    private let inverse: UInt64

    /// `R² mod m`.
    private let rSquared: UInt256

    /// The element 1 (`R mod m`).
    package let one: UInt256

    /// Precomputes what the arithmetic needs.
    ///
    /// - Parameter modulus: An odd prime with bit 255 set (a precondition; primality is the
    ///   caller's: ``inverse(of:)`` is Fermat's).
    package init(modulus: UInt256) {
        precondition(modulus.limb3 >> 63 == 1 && modulus.limb0 & 1 == 1, "modulus must be odd, with bit 255 set")
        self.modulus = modulus
        inverse = 0 &- MontgomeryModulus.inverseModulo2Pow64(modulus.limb0)
        // R mod m = 2^256 − m, below m because m > 2^255; 256 doublings make it R² mod m.
        let rModM = UInt256.zero.subtractingReportingOverflow(modulus).partialValue
        one = rModM
        var square = rModM
        for _ in 0..<256 {
            square = Self.add(square, square, modulus: modulus)
        }
        rSquared = square
    }

    /// `x mod m` for any 256-bit `x` (one subtraction at most, as `m > 2^255`).
    ///
    /// - Parameter x: Any 256-bit integer.
    /// - Returns: The integer below the modulus congruent to `x` (not in Montgomery form).
    package func reduced(_ x: UInt256) -> UInt256 {
        x < modulus ? x : x.subtractingReportingOverflow(modulus).partialValue
    }

    /// The element that stands for the integer `x mod m`.
    ///
    /// - Parameter x: Any 256-bit integer.
    /// - Returns: `x·R mod m`.
    package func element(_ x: UInt256) -> UInt256 {
        multiply(reduced(x), rSquared)
    }

    /// The integer an element stands for.
    ///
    /// - Parameter element: An element.
    /// - Returns: The integer, below the modulus.
    package func integer(_ element: UInt256) -> UInt256 {
        multiply(element, UInt256.one)
    }

    /// `a + b`.
    @inline(__always)
    package func add(_ a: UInt256, _ b: UInt256) -> UInt256 {
        Self.add(a, b, modulus: modulus)
    }

    /// `a − b`.
    @inline(__always)
    package func subtract(_ a: UInt256, _ b: UInt256) -> UInt256 {
        let (difference, borrow) = a.subtractingReportingOverflow(b)
        return borrow ? difference.addingReportingOverflow(modulus).partialValue : difference
    }

    /// `−a`.
    @inline(__always)
    package func negate(_ a: UInt256) -> UInt256 {
        subtract(.zero, a)
    }

    /// `a²`.
    @inline(__always)
    package func square(_ a: UInt256) -> UInt256 {
        multiply(a, a)
    }

    /// `a·b`: for elements, the element of the product (`a·b·R⁻¹ mod m`, CIOS).
    ///
    /// - Parameters:
    ///   - a: Any number below `2^256`.
    ///   - b: A number below the modulus.
    package func multiply(_ a: UInt256, _ b: UInt256) -> UInt256 {
        var t: Accumulator = (0, 0, 0, 0, 0)
        Self.multiplyRound(&t, a, b.limb0, modulus, inverse)
        Self.multiplyRound(&t, a, b.limb1, modulus, inverse)
        Self.multiplyRound(&t, a, b.limb2, modulus, inverse)
        Self.multiplyRound(&t, a, b.limb3, modulus, inverse)
        // t < 2m: subtract m once if t ≥ m.
        let result = UInt256(t.3, t.2, t.1, t.0)
        let (difference, borrow) = result.subtractingReportingOverflow(modulus)
        return t.4 != 0 || !borrow ? difference : result
    }

    /// Five limbs, least significant first: a CIOS accumulator, below `2m`.
    private typealias Accumulator = (UInt64, UInt64, UInt64, UInt64, UInt64)

    /// One outer step of CIOS: `t = (t + a·bi + q·m) / 2^64`, with `q` making the division exact;
    /// the two products' carry chains interleaved.
    @inline(__always)
    private static func multiplyRound(
        _ t: inout Accumulator,
        _ a: UInt256,
        _ bi: UInt64,
        _ m: UInt256,
        _ inverse: UInt64
    ) {
        var (productCarry, low) = multiplyAdding(a.limb0, bi, t.0, 0)
        let q = low &* inverse
        var (reductionCarry, _) = multiplyAdding(q, m.limb0, low, 0)
        (productCarry, low) = multiplyAdding(a.limb1, bi, t.1, productCarry)
        (reductionCarry, t.0) = multiplyAdding(q, m.limb1, low, reductionCarry)
        (productCarry, low) = multiplyAdding(a.limb2, bi, t.2, productCarry)
        (reductionCarry, t.1) = multiplyAdding(q, m.limb2, low, reductionCarry)
        (productCarry, low) = multiplyAdding(a.limb3, bi, t.3, productCarry)
        (reductionCarry, t.2) = multiplyAdding(q, m.limb3, low, reductionCarry)
        // t stays below 2m, so the top limb is 0 or 1.
        let (sum, overflow1) = t.4.addingReportingOverflow(productCarry)
        let (top, overflow2) = sum.addingReportingOverflow(reductionCarry)
        t.3 = top
        t.4 = (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
    }

    /// `a^exponent`, square and multiply (not constant-time).
    ///
    /// - Parameters:
    ///   - a: An element.
    ///   - exponent: An integer (not an element).
    /// - Returns: The element of the power.
    package func power(_ a: UInt256, _ exponent: UInt256) -> UInt256 {
        var result = one
        for index in stride(from: 255, through: 0, by: -1) {
            result = square(result)
            if exponent.bit(at: index) { result = multiply(result, a) }
        }
        return result
    }

    /// `a⁻¹`, by Fermat's little theorem (`a^(m−2)`); zero for zero.
    ///
    /// - Parameter a: An element.
    /// - Returns: The element of the inverse.
    package func inverse(of a: UInt256) -> UInt256 {
        power(a, modulus.subtractingReportingOverflow(UInt256(0, 0, 0, 2)).partialValue)
    }

    @inline(__always)
    private static func add(_ a: UInt256, _ b: UInt256, modulus: UInt256) -> UInt256 {
        let (sum, carry) = a.addingReportingOverflow(b)
        let (difference, borrow) = sum.subtractingReportingOverflow(modulus)
        return carry || !borrow ? difference : sum
    }

    /// `a·b + c + d` as a 128-bit number (it cannot overflow: at most `2^128 − 1`).
    @inline(__always)
    private static func multiplyAdding(
        _ a: UInt64,
        _ b: UInt64,
        _ c: UInt64,
        _ d: UInt64
    ) -> (high: UInt64, low: UInt64) {
        let product = a.multipliedFullWidth(by: b)
        let (low1, overflow1) = product.low.addingReportingOverflow(c)
        let (low2, overflow2) = low1.addingReportingOverflow(d)
        return (product.high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0), low2)
    }
}
