public import FoundationEssentials

/// The machine's power, from `/sys/class/power_supply` (a folder per supply, with `type`,
/// `status` and `capacity` files).
public enum PowerSupply {
    /// On battery (a battery discharging) below `threshold` percent. `false` with no battery.
    public static func isLowPower(
        threshold: Int = 20,
        root: URL = URL(fileURLWithPath: "/sys/class/power_supply")
    ) -> Bool {
        let supplies = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for supply in supplies {
            let folder = root.appendingPathComponent(supply)
            func read(_ name: String) -> String? {
                (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))?
                    .trimmed
            }
            guard read("type") == "Battery", read("status") == "Discharging",
                let capacity = read("capacity").flatMap({ Int($0) })
            else { continue }
            if capacity < threshold { return true }
        }
        return false
    }
}

extension PowerSupply {
    /// The first battery's charge in percent, or `nil` on a machine without one.
    public static func batteryLevel(root: String = "/sys/class/power_supply") -> Int? {
        let supplies = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for supply in supplies.sorted() {
            func read(_ name: String) -> String? {
                (try? String(contentsOfFile: "\(root)/\(supply)/\(name)", encoding: .utf8))?.trimmed
            }
            if read("type") == "Battery", let capacity = read("capacity").flatMap({ Int($0) }) { return capacity }
        }
        return nil
    }
}

extension PowerSupply {
    /// A reader of the battery's charge that goes to the power supply at most once per
    /// `maximumAge` on `clock`, and gives the last reading in between: a journal calls it at
    /// every fix, and a charge changes over minutes, not between two fixes.
    public static func cachedBatteryLevel<C: Clock>(
        maximumAge: Duration = .seconds(60),
        clock: C = ContinuousClock(),
        read: @escaping @Sendable () -> Int? = { batteryLevel() }
    ) -> @Sendable () -> Int? where C.Duration == Duration {
        let last = Locked<(level: Int?, at: C.Instant)?>(nil)
        return {
            let now = clock.now
            return last.withLock { last in
                if let last, last.at.duration(to: now) < maximumAge { return last.level }
                let level = read()
                last = (level, now)
                return level
            }
        }
    }
}
