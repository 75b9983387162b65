import Glibc

/// The tests' real-time bounds, all through one scale: `KEEPALIVE_TEST_TIME_SCALE` (default 1),
/// which `scripts/tsan` sets to 10 since every process runs about ten times slower under
/// ThreadSanitizer.
package enum TestTime {
    /// The scale every real-time bound is multiplied by.
    package static let scale: Int = {
        guard let text = getenv("KEEPALIVE_TEST_TIME_SCALE"), let value = Int(String(cString: text)) else { return 1 }
        return max(1, value)
    }()

    /// `duration`, scaled.
    package static func bound(_ duration: Duration) -> Duration { duration * scale }

    /// How long a test waits for something that must come before it calls it a hang: a wait
    /// that ends early when the thing comes, so a generous one costs nothing when all is well.
    /// A loaded 2-core machine running the whole suite makes things come seconds late, never
    /// this late.
    package static var patience: Duration { bound(.seconds(60)) }
}
