public import KeepAliveCore

/// What a strategy costs a device in energy: the receiver-on and device-awake fractions, the
/// time to fix per wake, milliwatt-hours per hour and hours on the device's battery. Each
/// strategy is a pattern of wakes (or none: awake throughout); each device a profile of figures,
/// every one with its source. `keepalive simulate --energy` prints the table.
public struct EnergyModel: Sendable {
    /// A device's figures (milliwatts, seconds, watt-hours).
    public struct Device: Sendable, Hashable {
        /// Its name in the table.
        public var name: String
        /// The system awake, idle (screen off): milliwatts.
        public var awake: Double
        /// The system suspended: milliwatts (`nil`: it never sleeps, a Pi).
        public var suspended: Double?
        /// The receiver tracking: milliwatts.
        public var receiverOn: Double
        /// The receiver off (backup): milliwatts.
        public var receiverOff: Double
        /// The battery: watt-hours (`nil`: a vehicle's supply).
        public var battery: Double?
        /// Where each figure comes from.
        public var sources: String
    }

    /// A strategy as a pattern: awake throughout with the receiver on a fraction of the time, or
    /// a wake every `period` for a fix.
    public struct Strategy: Sendable, Hashable {
        /// Its name in the table.
        public var name: String
        /// A wake every this long for one fix (`nil`: the device stays awake).
        public var period: Duration?
        /// Awake throughout: the receiver's on fraction (the watch, or what a pause leaves).
        public var receiverOnFraction: Double

        /// A strategy named `name`: a wake every `period`, or awake with the receiver on `receiverOnFraction` of the time.
        public init(name: String, period: Duration?, receiverOnFraction: Double) {
            self.name = name
            self.period = period
            self.receiverOnFraction = receiverOnFraction
        }
    }

    /// The strategies of the table: continuous 1 Hz, the hybrid in the background before and
    /// after the receiver's power was switched, monitoring, the scheduled refresh, a fix a minute.
    public static let strategies = [
        Strategy(name: "continuous, 1 Hz (watch)", period: nil, receiverOnFraction: 1),
        Strategy(name: "hybrid, background, receiver not switched (issue 20's 88.7 %)", period: nil, receiverOnFraction: 0.887),
        Strategy(name: "hybrid, background, receiver switched (a budgeted wake each 10 min)", period: .seconds(600), receiverOnFraction: 0),
        Strategy(name: "monitoring, still half the time (stationary pause)", period: nil, receiverOnFraction: 0.5),
        Strategy(name: "scheduled refresh, every 15 min", period: .seconds(900), receiverOnFraction: 0),
        Strategy(name: "one fix a minute, delivered", period: .seconds(60), receiverOnFraction: 0),
    ]

    /// The devices of the table.
    public static let devices = [
        Device(
            name: "PinePhone (EG25-G GNSS)", awake: 2_000, suspended: 177, receiverOn: 300, receiverOff: 0, battery: 11.5,
            sources: "11.5 Wh battery (3,000 mAh at 3.85 V); awake 2.0 W and GNSS 0.3 W from 4-6 h of logging kept awake (pinephone_modem_sdk #149: 11.5 Wh / 5 h = 2.3 W); suspended 177 mW (megi's PinePhone Pro figure, taken for the PinePhone)"
        ),
        Device(
            name: "Pi Zero 2 W + u-blox M8 (vehicle)", awake: 600, suspended: nil, receiverOn: 69, receiverOff: 0.05, battery: nil,
            sources: "Pi Zero 2 W idle about 120 mA at 5 V (no suspend); MAX-M8Q 23 mA at 3 V tracking, backup 15 uA (data sheet)"
        ),
        Device(
            name: "laptop + USB u-blox M8", awake: 6_000, suspended: 500, receiverOn: 150, receiverOff: 0.05, battery: 50,
            sources: "a 50 Wh laptop idle at 6 W, s2idle 0.5 W (typical); a USB M8 dongle 30 mA at 5 V, backup as the M8's"
        ),
    ]

    /// The receiver's starts (the M8's).
    public var starts = ReceiverStartModel()
    /// Seconds awake per wake besides its work: resume and back to sleep (issue 83's hour:
    /// 0.96 s awake per wake for 0.18 s of work).
    public var wakeOverhead: Duration = .milliseconds(780)
    /// Seconds of delivery per wake (a journaled fix posted on a live link).
    public var delivery: Duration = .milliseconds(200)

    /// The M8's starts, issue 83's wakes.
    public init() {}

    /// One row: a strategy on a device.
    public struct Row: Sendable, Hashable {
        /// The strategy's name.
        public var strategy: String
        /// The device's name.
        public var device: String
        /// The receiver's on fraction.
        public var receiverOn: Double
        /// The device's awake fraction.
        public var awake: Double
        /// The time to fix per wake (`nil`: no wakes).
        public var timeToFix: Duration?
        /// Milliwatt-hours per hour (the mean power in milliwatts).
        public var milliwattHoursPerHour: Double
        /// Hours on the battery (`nil`: none).
        public var hours: Double?
    }

    /// `strategy` on `device`, over an hour.
    public func row(_ strategy: Strategy, on device: Device) -> Row {
        let hour = 3_600.0
        var receiverOn: Double
        var awake: Double
        var timeToFix: Duration?
        if let period = strategy.period {
            // Each wake: a hot start (the ephemeris kept current: 30 s of tracking every 4 h).
            let wakes = hour / period.seconds
            let fix = starts.hotTimeToFix
            let refresh = starts.ephemerisCollection.seconds * hour / starts.ephemerisValidity.seconds
            receiverOn = (wakes * fix.seconds + refresh) / hour
            let perWake = wakeOverhead.seconds + fix.seconds + delivery.seconds
            awake = device.suspended == nil ? 1 : min(1, (wakes * perWake + refresh) / hour)
            timeToFix = fix
        } else {
            receiverOn = strategy.receiverOnFraction
            awake = 1
        }
        let system = awake * device.awake + (1 - awake) * (device.suspended ?? device.awake)
        let receiver = receiverOn * device.receiverOn + (1 - receiverOn) * device.receiverOff
        let power = system + receiver
        return Row(
            strategy: strategy.name, device: device.name, receiverOn: receiverOn, awake: awake, timeToFix: timeToFix,
            milliwattHoursPerHour: power, hours: device.battery.map { $0 * 1_000 / power }
        )
    }

    /// Every strategy on every device, as a Markdown table, with the devices' sources below it.
    public func table() -> String {
        var lines = [
            "| device | strategy | receiver on | device awake | time to fix per wake | mWh per hour | hours on battery |",
            "|---|---|---|---|---|---|---|",
        ]
        for device in Self.devices {
            for strategy in Self.strategies {
                let row = row(strategy, on: device)
                lines.append(
                    "| \(device.name) | \(strategy.name) | \(percent(row.receiverOn)) | \(percent(row.awake)) | "
                        + "\(row.timeToFix.map { "\(Int($0.seconds)) s (hot)" } ?? "-") | \(Int(row.milliwattHoursPerHour.rounded())) | "
                        + "\(row.hours.map { "\(Int($0.rounded()))" } ?? "vehicle's supply") |"
                )
            }
        }
        lines.append("")
        for device in Self.devices { lines.append("- \(device.name): \(device.sources).") }
        lines.append(
            "- Each wake: \(wakeOverhead.seconds) s of resume and return (issue 83's hour), a hot start's \(starts.hotTimeToFix.seconds) s (M8 data sheet), "
                + "\(delivery.seconds) s of delivery; 30 s of tracking every 4 h keeps the ephemeris current (the refresh)."
        )
        return lines.joined(separator: "\n") + "\n"
    }

    private func percent(_ fraction: Double) -> String {
        let tenths = (fraction * 1_000).rounded() / 10
        return "\(tenths) %"
    }
}
