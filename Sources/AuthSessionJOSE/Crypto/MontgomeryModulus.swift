/// An odd modulus of any size with what Montgomery multiplication needs precomputed: the RSA
/// modulus that `s^e mod n` (verification) and `m^d mod n` (the test kit's signing) run under.
///
/// With `k` limbs and `R = 2^(64k)`, a number `a` is held as `a·R mod n`; the product of two such
/// numbers is `a·b·R mod n`, computed without a division (CIOS, Koç, Acar and Kaliski 1996).
/// ``power(_:_:)`` allocates once and multiplies in that memory.
///
/// All operations are thread-safe.
package struct MontgomeryModulus: Sendable, Hashable {

    /// The modulus `n`.
    package let modulus: BigUInt

    /// `-n⁻¹ mod 2^64`.
    private let inverse: UInt64

    /// `R² mod n`, `k` limbs: multiplying by it moves a number into Montgomery form.
    private let rSquared: [UInt64]

    /// Precomputes what multiplying modulo `modulus` needs (the work of about a dozen
    /// multiplications).
    ///
    /// - Parameter modulus: An odd modulus greater than 1 (a precondition).
    package init(_ modulus: BigUInt) {
        precondition(modulus.isOdd && modulus.significantBitCount >= 2, "a Montgomery modulus must be odd and above 1")
        self.modulus = modulus
        let n = modulus.limbs
        let k = n.count
        inverse = 0 &- Self.inverseModulo2Pow64(n[0])

        // R² mod n: doublings reach 2^(64k + j) mod n, the Montgomery form of 2^j, and s
        // Montgomery squarings then give the form of 2^(j·2^s) = R, that is R² mod n; with
        // 64k = j·2^s (j odd), it takes at most 64 + j doublings instead of 64k.
        let bitLength = modulus.significantBitCount
        let shift = (64 * k).trailingZeroBitCount
        let j = (64 * k) >> shift
        var x = [UInt64](repeating: 0, count: k)
        x[(bitLength - 1) / 64] = 1 << UInt64((bitLength - 1) % 64)
        for _ in 0..<(64 * k + j - (bitLength - 1)) {
            Self.doubleModulo(&x, n)
        }
        var scratch = [UInt64](repeating: 0, count: k + 1)
        let inverse = inverse
        x.withUnsafeMutableBufferPointer { x in
            n.withUnsafeBufferPointer { n in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    for _ in 0..<shift {
                        Self.multiply(
                            x.baseAddress!,
                            x.baseAddress!,
                            into: x.baseAddress!,
                            modulus: n.baseAddress!,
                            count: k,
                            inverse: inverse,
                            scratch: scratch.baseAddress!
                        )
                    }
                }
            }
        }
        rSquared = x
    }

    /// `base^exponent mod n`.
    ///
    /// A fixed window of 4 bits for exponents over 64 bits (a private exponent), square and
    /// multiply otherwise (a public exponent such as 65537: 16 squarings and 1 multiplication).
    /// Not constant-time: for public data, and the test kit's private keys.
    ///
    /// - Parameters:
    ///   - base: A number below the modulus (a precondition).
    ///   - exponent: Any exponent; 0 gives 1.
    /// - Returns: The power, below the modulus.
    package func power(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt {
        precondition(base < modulus, "base not reduced")
        let k = modulus.limbs.count
        let windowBits = exponent.significantBitCount > 64 ? 4 : 1
        let tableCount = 1 << windowBits
        // One allocation: the table of base^i in Montgomery form, the accumulator, an operand
        // (k limbs each) and the multiplication's scratch (k + 1).
        var memory = [UInt64](repeating: 0, count: tableCount * k + k + k + (k + 1))
        var result = [UInt64](repeating: 0, count: k)
        let inverse = inverse
        memory.withUnsafeMutableBufferPointer { memory in
            modulus.limbs.withUnsafeBufferPointer { n in
                rSquared.withUnsafeBufferPointer { rSquared in
                    let n = n.baseAddress!
                    let table = memory.baseAddress!
                    let accumulator = table + tableCount * k
                    let operand = accumulator + k
                    let scratch = operand + k
                    func multiply(
                        _ a: UnsafePointer<UInt64>,
                        _ b: UnsafePointer<UInt64>,
                        into out: UnsafeMutablePointer<UInt64>
                    ) {
                        Self.multiply(a, b, into: out, modulus: n, count: k, inverse: inverse, scratch: scratch)
                    }

                    // table[0] = 1·R, table[1] = base·R, table[i] = base^i·R.
                    operand[0] = 1
                    multiply(operand, rSquared.baseAddress!, into: table)
                    operand[0] = 0
                    for (index, limb) in base.limbs.enumerated() { operand[index] = limb }
                    multiply(operand, rSquared.baseAddress!, into: table + k)
                    for index in stride(from: 2, to: tableCount, by: 1) {
                        multiply(table + (index - 1) * k, table + k, into: table + index * k)
                    }

                    accumulator.update(from: table, count: k)
                    let windowCount = (exponent.significantBitCount + windowBits - 1) / windowBits
                    for window in stride(from: windowCount - 1, through: 0, by: -1) {
                        if window != windowCount - 1 {
                            for _ in 0..<windowBits { multiply(accumulator, accumulator, into: accumulator) }
                        }
                        var digit = 0
                        for bit in stride(from: windowBits - 1, through: 0, by: -1) {
                            digit = digit << 1 | (exponent.bit(at: window * windowBits + bit) ? 1 : 0)
                        }
                        if digit != 0 { multiply(accumulator, table + digit * k, into: accumulator) }
                    }

                    // Out of Montgomery form: multiply by 1.
                    operand.update(repeating: 0, count: k)
                    operand[0] = 1
                    result.withUnsafeMutableBufferPointer { result in
                        multiply(accumulator, operand, into: result.baseAddress!)
                    }
                }
            }
        }
        return BigUInt(limbs: result)
    }

    /// `out = a·b·R⁻¹ mod n` for `a, b < n` (CIOS); `out` may be `a` or `b`.
    ///
    /// `scratch` holds `k + 1` limbs; nothing is allocated.
    @inline(__always)
    private static func multiply(
        _ a: UnsafePointer<UInt64>,
        _ b: UnsafePointer<UInt64>,
        into out: UnsafeMutablePointer<UInt64>,
        modulus n: UnsafePointer<UInt64>,
        count k: Int,
        inverse: UInt64,
        scratch t: UnsafeMutablePointer<UInt64>
    ) {
        // The arithmetic is written out and the loops are `while` loops: a debug build (tests,
        // the test kit's signing) otherwise spends most of its time in calls.
        t.update(repeating: 0, count: k + 1)
        var high: UInt64
        var i = 0
        while i < k {
            // t = (t + a·b[i] + m·n) / 2^64, with m chosen so the division is exact. The two
            // products' carry chains run side by side (for the processor, two independent chains).
            let bi = b[i]
            var product = a[0].multipliedFullWidth(by: bi)
            var (low, overflow) = product.low.addingReportingOverflow(t[0])
            var productCarry = product.high &+ (overflow ? 1 : 0)
            let m = low &* inverse
            var reduction = m.multipliedFullWidth(by: n[0])
            (_, overflow) = reduction.low.addingReportingOverflow(low)
            var reductionCarry = reduction.high &+ (overflow ? 1 : 0)
            var j = 1
            while j < k {
                // low = a[j]·b[i] + t[j] + productCarry (low limb; high limb to productCarry)
                product = a[j].multipliedFullWidth(by: bi)
                (low, overflow) = product.low.addingReportingOverflow(t[j])
                high = product.high &+ (overflow ? 1 : 0)
                (low, overflow) = low.addingReportingOverflow(productCarry)
                productCarry = high &+ (overflow ? 1 : 0)
                // t[j − 1] = m·n[j] + low + reductionCarry (low limb; high limb to reductionCarry)
                reduction = m.multipliedFullWidth(by: n[j])
                (low, overflow) = reduction.low.addingReportingOverflow(low)
                high = reduction.high &+ (overflow ? 1 : 0)
                (t[j - 1], overflow) = low.addingReportingOverflow(reductionCarry)
                reductionCarry = high &+ (overflow ? 1 : 0)
                j &+= 1
            }
            // t stays below 2n, so the top limb is 0 or 1.
            let (sum, overflow1) = t[k].addingReportingOverflow(productCarry)
            let (top, overflow2) = sum.addingReportingOverflow(reductionCarry)
            t[k - 1] = top
            t[k] = (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
            i &+= 1
        }

        // t < 2n: subtract n once if t ≥ n.
        var subtract = t[k] != 0
        if !subtract {
            subtract = true
            for index in stride(from: k - 1, through: 0, by: -1) where t[index] != n[index] {
                subtract = t[index] > n[index]
                break
            }
        }
        if subtract {
            var borrow = false
            for index in 0..<k {
                let (difference, borrow1) = t[index].subtractingReportingOverflow(n[index])
                let (final, borrow2) = difference.subtractingReportingOverflow(borrow ? 1 : 0)
                out[index] = final
                borrow = borrow1 || borrow2
            }
        } else {
            out.update(from: t, count: k)
        }
    }

    /// `x = 2x mod n` for `x < n`.
    private static func doubleModulo(_ x: inout [UInt64], _ n: [UInt64]) {
        var carry: UInt64 = 0
        for index in x.indices {
            let next = x[index] >> 63
            x[index] = x[index] << 1 | carry
            carry = next
        }
        var subtract = carry != 0
        if !subtract {
            subtract = true
            for index in x.indices.reversed() where x[index] != n[index] {
                subtract = x[index] > n[index]
                break
            }
        }
        guard subtract else { return }
        var borrow = false
        for index in x.indices {
            let (difference, borrow1) = x[index].subtractingReportingOverflow(n[index])
            let (final, borrow2) = difference.subtractingReportingOverflow(borrow ? 1 : 0)
            x[index] = final
            borrow = borrow1 || borrow2
        }
    }

    /// `a⁻¹ mod 2^64` for odd `a`, by Newton's iteration (each step doubles the correct bits).
    package static func inverseModulo2Pow64(_ a: UInt64) -> UInt64 {
        precondition(a & 1 == 1, "only an odd number has an inverse modulo 2^64")
        var inverse: UInt64 = 1
        for _ in 0..<6 {
            inverse = inverse &* (2 &- a &* inverse)
        }
        return inverse
    }
}
