/// A small, fast random number generator (SplitMix64) that a seed fully determines, so a
/// randomized test, a retry policy's jitter, or a model-based run can be replayed.
///
/// Not cryptographically secure: for tests only.
///
/// Not thread-safe: use from one task at a time (it is a value; give each task its own).
public struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable {

    private var state: UInt64

    /// Creates a generator whose whole sequence `seed` determines.
    ///
    /// - Parameter seed: The seed.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
