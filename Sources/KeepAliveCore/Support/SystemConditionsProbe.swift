import FoundationEssentials

/// Reads the conditions scheduled work depends on from the kernel: external power from
/// `/sys/class/power_supply` (a mains or USB supply online, or no battery at all), and the
/// network from a default route in `/proc/net/route` whose interface is up in `/sys/class/net`.
public struct SystemConditionsProbe: Sendable {
    /// Where power supplies are listed.
    public var powerSupplies = "/sys/class/power_supply"
    /// The kernel's routing table.
    public var routes = "/proc/net/route"
    /// Where network interfaces are listed.
    public var interfaces = "/sys/class/net"

    /// A probe of the real system.
    public init() {}

    /// Power and network now.
    public func read() -> SystemConditions {
        SystemConditions(hasExternalPower: hasExternalPower(), hasNetwork: hasNetwork())
    }

    func hasExternalPower() -> Bool {
        let supplies = (try? FileManager.default.contentsOfDirectory(atPath: powerSupplies)) ?? []
        var hasBattery = false
        for supply in supplies {
            let type = KernelFile.read("\(powerSupplies)/\(supply)/type")?.trimmed
            if type == "Battery" { hasBattery = true }
            if type == "Mains" || type == "USB", KernelFile.read("\(powerSupplies)/\(supply)/online")?.trimmed == "1" {
                return true
            }
        }
        return !hasBattery  // a machine with no battery runs on external power
    }

    func hasNetwork() -> Bool {
        guard let table = KernelFile.read(routes) else { return false }
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard fields.count > 3, fields[1] == "00000000" else { continue }  // the default route
            let state = KernelFile.read("\(interfaces)/\(fields[0])/operstate")?.trimmed
            if state == "up" || state == "unknown" { return true }
        }
        return false
    }
}
