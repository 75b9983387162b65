/// A small, fast, reproducible random generator (SplitMix64): property and soak tests name the
/// seed of a failure, and the same seed replays it.
public struct SeededGenerator: RandomNumberGenerator {
    /// The state, which the seed starts.
    public var state: UInt64

    /// A generator from `seed`.
    public init(state seed: UInt64) {
        state = seed
    }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476C_E5B9_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
