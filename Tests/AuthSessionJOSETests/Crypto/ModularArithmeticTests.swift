import AuthSessionJOSE
import Testing

/// The big-number arithmetic under RSA and P-256: ``BigUInt``, ``MontgomeryModulus``,
/// ``UInt256`` and ``PrimeField256``.
@Suite(.disabled(if: isThreadSanitized, "pure computation, no thread to watch: plain swift test runs it"))
struct ModularArithmeticTests {

    struct ModularPower: Sendable, CustomTestStringConvertible {
        let modulus: String
        let base: String
        let exponent: String
        let power: String

        var testDescription: String { "\(modulus.count * 4)-bit modulus" }
    }

    /// Python's `pow(base, exponent, modulus)` for random odd moduli of 65, 192 and 1000 bits:
    /// 2, 3 and 16 limbs, a short exponent (square and multiply) and long ones (the 4-bit window).
    @Test(
        "powers match Python's pow",
        arguments: [
            ModularPower(
                modulus: "1f2a74de452e6b439",
                base: "a6a3a4506513270e",
                exponent: "d23f0824128b2f33",
                power: "d64445b2b66a9075"
            ),
            ModularPower(
                modulus: "e8e25d940ed904759531985d5d9dc9f81818e811892f902b",
                base: "6b0d549b6f03675a1600a35a099950d836f675cc81e74ef5",
                exponent: "81738f7d93d9c172411e20b8f",
                power: "24c5b6e8aaacdb23cbfa960d72764e694bb1df292f3bd399"
            ),
            ModularPower(
                modulus: """
                    aed0eda82f8f6d05584ef8aa38922766581e27a1c08a6a63ec24ede6a46b4cb2424a23d5962217beaddbc496cb8e8197\
                    3e0becd7b03898d190f9ebdacc0cb1e29c658cda1495e60af593bd04cf0fd630f1f29d0da9953f48f1a09f76b5a170b3\
                    3839263059f28c105d1fb17c2390c192cfd3ac94af0f21ddb66cad4a27
                    """,
                base: """
                    18e203a4649e982c427c63c9eead717c1f2e95e5ecd226456c4f15fd8c8119f5454bc38c3b5519f06274a75c243876df\
                    da6189d8ce4f85ffd1b442d68872632287cf2cdbcb08915ebb7b8500e580a43fd11d75e28e210d9b30eb998473778082\
                    9a262f41a93d8c406883de59240178e099c1372ae20b3ffe2bc196cb64
                    """,
                exponent: """
                    6592b1d3f28ede0d7ac3baea9e13deef86ab1031d0f646e1f40a097c976bf46c697d2caf82eeeacbe226e875555790f8\
                    2ec1d3fcff2a3af4d46b0a18e8830e07bc1e398f1012bd4acefaecbd389be4bcfc49b64a0872e6cc3ababced2057ee05\
                    cde00902c77ebff206867347214cdd2055930d6eaf14f4733f3e7d1bfb
                    """,
                power: """
                    807f7492bd04d1c5271593f9b7a659d3cc1c974556826a0e0845bb7fdcbd65f775ca8510fc3ea03543833bc3619cd4ad\
                    551558a0002c2de68cc836f609e1d6bd2c18ebcae54324ff84eba18a7cab3d656935c31c1e17c923432d197959c148fa\
                    fbce819f25823efccad14353651b16ca007e200e92f67c7fd86e102437
                    """
            ),
        ]
    )
    func powersMatchPython(_ vector: ModularPower) throws {
        let modulus = MontgomeryModulus(try integer(vector.modulus))
        let power = modulus.power(try integer(vector.base), try integer(vector.exponent))
        #expect(power == (try integer(vector.power)))
    }

    /// `x^1 = x` and `x^0 = 1` catch a wrong `R² mod n` for every size: the precomputation takes
    /// another path for each count of limbs (64·k = j·2^s with j odd).
    @Test("x^1 = x, x^0 = 1, 0^5 = 0 and (x^3)^5 = x^15 for moduli of 1 to 129 limbs")
    func identities() async {
        var generator = SystemRandomNumberGenerator()
        for limbCount in 1...129 {
            await Task.yield()  // milliseconds each in a debug build: leave the runner's threads free
            var limbs = (0..<limbCount).map { _ in generator.next() as UInt64 }
            limbs[0] |= 1
            limbs[limbCount - 1] |= 1 << 63
            let modulus = MontgomeryModulus(BigUInt(limbs: limbs))
            var baseLimbs = limbs
            // Below the modulus: its top limb halved (after the low limb is drawn, which is the
            // top limb too for one limb: drawn last, it could reach the modulus).
            baseLimbs[0] = generator.next()
            baseLimbs[limbCount - 1] >>= 1
            let base = BigUInt(limbs: baseLimbs)
            let zero = BigUInt(limbs: [])
            #expect(modulus.power(base, BigUInt(1)) == base, "\(limbCount) limbs")
            #expect(modulus.power(base, zero) == BigUInt(1), "\(limbCount) limbs")
            #expect(modulus.power(zero, BigUInt(5)) == zero, "\(limbCount) limbs")
            let cubed = modulus.power(base, BigUInt(3))
            #expect(modulus.power(cubed, BigUInt(5)) == modulus.power(base, BigUInt(15)), "\(limbCount) limbs")
        }
    }

    @Test("the 4-bit window agrees with square and multiply, and with Fermat")
    func windowMatchesBinary() throws {
        let prime = try integer("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
        let primeMinusOne = try integer("ffffffff00000001000000000000000000000000fffffffffffffffffffffffe")
        let modulus = MontgomeryModulus(prime)
        let base = try integer("123456789abcdef0fedcba9876543210")
        for value in [BigUInt(2), BigUInt(3), base] {
            #expect(modulus.power(value, primeMinusOne) == BigUInt(1))
        }
        // (x^a)^b with a = 2^40 + 3 and b = 2^40 + 5, each by square and multiply, against
        // x^(a·b) = x^(2^80 + 2^43 + 15) by the window.
        let a = BigUInt((1 << 40) + 3)
        let b = BigUInt((1 << 40) + 5)
        let product = BigUInt(limbs: [(1 << 43) + 15, 1 << 16])
        #expect(modulus.power(modulus.power(base, a), b) == modulus.power(base, product))
    }

    @Test("P-256 field arithmetic agrees with the general Montgomery modulus")
    func fieldAgreesWithMontgomeryModulus() async {
        var generator = SystemRandomNumberGenerator()
        for field in [P256Point.coordinateField, P256Point.scalarField] {
            let modulus = MontgomeryModulus(BigUInt(bigEndianBytes: field.modulus.bigEndianBytes))
            for _ in 0..<50 {
                await Task.yield()
                let value = field.reduced(
                    UInt256(generator.next(), generator.next(), generator.next(), generator.next())
                )
                let element = field.element(value)
                #expect(field.integer(element) == value)
                let exponent = UInt256(0, 0, generator.next(), generator.next())
                let viaField = field.integer(field.power(element, exponent))
                let viaModulus = modulus.power(
                    BigUInt(bigEndianBytes: value.bigEndianBytes),
                    BigUInt(bigEndianBytes: exponent.bigEndianBytes)
                )
                #expect(BigUInt(bigEndianBytes: viaField.bigEndianBytes) == viaModulus)
                if !value.isZero {
                    #expect(field.multiply(field.inverse(of: element), element) == field.one)
                }
                let other = field.element(UInt256(generator.next(), 0, 0, generator.next()))
                #expect(field.subtract(field.add(element, other), other) == element)
                #expect(field.add(element, field.negate(element)) == .zero)
            }
            // Reduction at the edges: m reduces to 0, 2^256 − 1 to 2^256 − 1 − m.
            #expect(field.reduced(field.modulus) == .zero)
            let all = UInt256(.max, .max, .max, .max)
            #expect(field.reduced(all) == all.subtractingReportingOverflow(field.modulus).partialValue)
        }
    }

    @Test("big-endian bytes round trip, with leading zeros and at the limbs' edges")
    func bytesRoundTrip() {
        #expect(BigUInt(bigEndianBytes: [0, 0, 0]).isZero)
        #expect(BigUInt(bigEndianBytes: []).significantBitCount == 0)
        #expect(BigUInt(bigEndianBytes: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]) == BigUInt(limbs: [0, 1]))
        #expect(BigUInt(bigEndianBytes: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]) == BigUInt(limbs: [0, 1 << 8]))
        let bytes: [UInt8] = (1...17).map { UInt8($0) }
        let value = BigUInt(bigEndianBytes: bytes)
        #expect(value.significantBitCount == 17 * 8 - 7)
        #expect(value.bigEndianBytes(count: 17) == bytes)
        #expect(value.bigEndianBytes(count: 20) == [0, 0, 0] + bytes)
        #expect(value.bit(at: 0) && !value.bit(at: 1) && !value.bit(at: 1000))
        #expect(BigUInt(5) < BigUInt(limbs: [0, 1]) && !(BigUInt(limbs: [0, 1]) < BigUInt(5)))
        #expect(BigUInt(limbs: [7, 0, 0]) == BigUInt(7))

        let wide = UInt256(bigEndianBytes: (1...32).map { UInt8($0) })
        #expect(wide?.bigEndianBytes == (1...32).map { UInt8($0) })
        #expect(UInt256(bigEndianBytes: [UInt8](repeating: 1, count: 33)) == nil)
        #expect(UInt256(bigEndianBytes: [0x01, 0x02]) == UInt256(0, 0, 0, 0x0102))
        #expect(UInt256(0, 0, 0, 1).bit(at: 0) && UInt256(1 << 63, 0, 0, 0).bit(at: 255))
        #expect(UInt256(0, 0, 1, 0) > UInt256(0, 0, 0, .max))
        let (sum, carry) = UInt256(.max, .max, .max, .max).addingReportingOverflow(.one)
        #expect(sum == .zero && carry)
        let (difference, borrow) = UInt256.zero.subtractingReportingOverflow(.one)
        #expect(difference == UInt256(.max, .max, .max, .max) && borrow)
    }

    private func integer(_ hexadecimal: String) throws -> BigUInt {
        let padded = hexadecimal.count.isMultiple(of: 2) ? hexadecimal : "0" + hexadecimal
        return BigUInt(bigEndianBytes: try #require(CryptoFixtures.bytes(hexadecimal: padded)))
    }
}
