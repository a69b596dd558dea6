/// SHA-256 (FIPS 180-4), written here because the package may not depend on a cryptography
/// library: the PKCE S256 challenge, and the digest that RS256 and ES256 signatures sign.
///
/// All operations are thread-safe.
package enum SHA256 {

    /// The digest's length in bytes.
    package static let digestByteCount = 32

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// The 32-byte digest of `message`.
    ///
    /// - Parameter message: The bytes to hash, of any length.
    /// - Returns: The digest, big-endian as FIPS 180-4 writes it.
    package static func hash(_ message: some Sequence<UInt8>) -> [UInt8] {
        if let digest = message.withContiguousStorageIfAvailable({ hash(bytes: $0) }) {
            return digest
        }
        return Array(message).withUnsafeBufferPointer { hash(bytes: $0) }
    }

    /// The digest of contiguous bytes: full blocks are compressed where they lie, without a copy.
    private static func hash(bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var state: [UInt32] = [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ]
        // One message schedule for all blocks, and a buffer for the last one or two (the padding).
        var schedule = [UInt32](repeating: 0, count: 64)
        let fullLength = bytes.count - bytes.count % 64
        var tail = [UInt8](repeating: 0, count: 128)
        for index in fullLength..<bytes.count {
            tail[index - fullLength] = bytes[index]
        }
        // Padding: 0x80, zeros up to 56 mod 64, then the bit length as a 64-bit big-endian number.
        let remainder = bytes.count - fullLength
        tail[remainder] = 0x80
        let tailLength = remainder < 56 ? 64 : 128
        let bitCount = UInt64(bytes.count) &* 8
        for index in 0..<8 {
            tail[tailLength - 8 + index] = UInt8(truncatingIfNeeded: bitCount >> UInt64(56 - index * 8))
        }

        state.withUnsafeMutableBufferPointer { state in
            schedule.withUnsafeMutableBufferPointer { schedule in
                roundConstants.withUnsafeBufferPointer { constants in
                    var offset = 0
                    while offset < fullLength {
                        compress(bytes.baseAddress! + offset, state: state, schedule: schedule, constants: constants)
                        offset += 64
                    }
                    tail.withUnsafeBufferPointer { tail in
                        for offset in stride(from: 0, to: tailLength, by: 64) {
                            compress(tail.baseAddress! + offset, state: state, schedule: schedule, constants: constants)
                        }
                    }
                }
            }
        }

        var digest = [UInt8]()
        digest.reserveCapacity(digestByteCount)
        for word in state {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// Runs the compression function over the 64-byte block at `block`.
    private static func compress(
        _ block: UnsafePointer<UInt8>,
        state hash: UnsafeMutableBufferPointer<UInt32>,
        schedule words: UnsafeMutableBufferPointer<UInt32>,
        constants: UnsafeBufferPointer<UInt32>
    ) {
        for index in 0..<16 {
            let offset = index * 4
            words[index] =
                UInt32(block[offset]) << 24 | UInt32(block[offset + 1]) << 16 | UInt32(block[offset + 2]) << 8
                | UInt32(block[offset + 3])
        }
        for index in 16..<64 {
            let w15 = words[index - 15]
            let w2 = words[index - 2]
            let s0 = rotate(w15, 7) ^ rotate(w15, 18) ^ (w15 >> 3)
            let s1 = rotate(w2, 17) ^ rotate(w2, 19) ^ (w2 >> 10)
            words[index] = words[index - 16] &+ s0 &+ words[index - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = (hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7])
        for index in 0..<64 {
            let sum1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
            let choice = (e & f) ^ (~e & g)
            let temp1 = h &+ sum1 &+ choice &+ constants[index] &+ words[index]
            let sum0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let temp2 = sum0 &+ majority
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
        }
        hash[0] &+= a
        hash[1] &+= b
        hash[2] &+= c
        hash[3] &+= d
        hash[4] &+= e
        hash[5] &+= f
        hash[6] &+= g
        hash[7] &+= h
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }
}
