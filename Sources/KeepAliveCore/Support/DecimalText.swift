extension Double {
    /// The value with exactly `decimals` digits after the point, like `%.Nf` (`-0.5` → `"-0.50"`).
    ///
    /// FoundationEssentials has no `String(format:)`; this is the one number format we need,
    /// without allocating more than the result. Magnitudes beyond 1e15 fall back to `description`.
    package func fixed(_ decimals: Int) -> String {
        guard isFinite else { return isNaN ? "nan" : (self < 0 ? "-inf" : "inf") }
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (magnitude * Double(scale)).rounded()
        guard scaled < 1e18 else { return description }
        let units = UInt64(scaled)
        var text = (self < 0 && units != 0 ? "-" : "") + String(units / scale)
        if decimals > 0 {
            let fraction = String(units % scale)
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return text
    }

    /// The value with `digits` significant digits and no trailing zeros, like `%.Ng` for the
    /// magnitudes of durations and distances (`0.25` → `"0.25"`, `123.456` → `"123"`).
    package func significant(_ digits: Int) -> String {
        guard isFinite, self != 0 else { return isFinite ? "0" : fixed(0) }
        var magnitudeDigits = 0
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            magnitudeDigits += 1
        }
        while probe < 1 {
            probe *= 10
            magnitudeDigits -= 1
        }
        var text = fixed(max(0, digits - 1 - magnitudeDigits))
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text
    }
}
