import Dispatch
public import KeepAliveCore
import KeepAliveBus

/// A modem's GNSS (the PinePhone's EG25-G), switched through ModemManager's Location interface
/// on the system bus: on is `Setup` with the GPS sources added to those enabled, off is `Setup`
/// without them (ModemManager's Quectel plugin sends `AT+QGPS=1` and `AT+QGPSEND`). Other
/// sources (the cell's 3GPP location) are left as they were.
///
/// The GPS source is "unmanaged" where the modem offers it (ModemManager starts the GNSS and
/// leaves its NMEA port to gpsd, as PinePhone users run it), else raw and NMEA.
public struct ModemManagerGNSS: ReceiverPowerControl {
    /// The modem's object path (`/org/freedesktop/ModemManager1/Modem/0`).
    public let modem: String
    /// The GPS sources switched (ModemManager's `MMModemLocationSource` bits).
    public let gpsSources: UInt32
    private static let queue = DispatchQueue(label: "LocationKeepAlive.receiver.modemmanager")
    static let service = "org.freedesktop.ModemManager1"
    static let location = "org.freedesktop.ModemManager1.Modem.Location"

    /// ModemManager's location sources (`MMModemLocationSource`).
    public enum Source {
        /// The serving cell's identity.
        public static let cell: UInt32 = 1 << 0
        /// GPS fixes parsed by ModemManager.
        public static let gpsRaw: UInt32 = 1 << 1
        /// GPS NMEA traces relayed by ModemManager.
        public static let gpsNMEA: UInt32 = 1 << 2
        /// GPS started, its NMEA port left to another reader (gpsd).
        public static let gpsUnmanaged: UInt32 = 1 << 4
        /// Every GPS source.
        public static let gps: UInt32 = gpsRaw | gpsNMEA | gpsUnmanaged
    }

    /// The first modem whose Location interface can give GPS, if ModemManager has one; throws
    /// when the system bus cannot be asked or ModemManager is not running (it is never started
    /// for the question: the bus would start an installed one on demand).
    public static func find() async throws(ReceiverPowerError) -> ModemManagerGNSS? {
        try await queue.awaiting { () throws(ReceiverPowerError) in
            let bus = try open()
            guard (try? bus.hasOwner(service)) == true else {
                throw ReceiverPowerError("ModemManager is not on the system bus: is it running? (`systemctl status ModemManager`)")
            }
            for modem in try modems(on: bus) {
                guard let capabilities = try? property("Capabilities", of: modem, on: bus, { $0.readUInt32() }) else { continue }
                let unmanaged = capabilities & Source.gpsUnmanaged
                let sources = unmanaged != 0 ? unmanaged : capabilities & (Source.gpsRaw | Source.gpsNMEA)
                if sources != 0 { return ModemManagerGNSS(modem: modem, gpsSources: sources) }
            }
            return nil
        }
    }

    /// `modemmanager`.
    public var way: ReceiverPowerWay { .modemmanager }
    /// Yes: the modem stays powered, and its GNSS engine keeps its ephemeris.
    public var keepsBackup: Bool { true }

    /// `Setup` with the GPS sources added.
    public func switchOn() async throws(ReceiverPowerError) { try await setup { $0 | gpsSources } }

    /// `Setup` with every GPS source taken away.
    public func switchOff() async throws(ReceiverPowerError) { try await setup { $0 & ~Source.gps } }

    private func setup(_ change: @escaping @Sendable (UInt32) -> UInt32) async throws(ReceiverPowerError) {
        let modem = modem
        try await Self.queue.awaiting { () throws(ReceiverPowerError) in
            let bus = try Self.open()
            let enabled = try Self.property("Enabled", of: modem, on: bus) { $0.readUInt32() }
            let signals = try Self.property("SignalsLocation", of: modem, type: "b", on: bus) { $0.readBool() }
            do {
                let reply = try bus.call(Self.service, path: modem, interface: Self.location, member: "Setup") { call in
                    call.append(change(enabled))
                    call.append(signals)
                }
                reply.release()
            } catch {
                throw ReceiverPowerError("ModemManager refused the GNSS's switch on \(modem): \(error)")
            }
        }
    }

    private static func open() throws(ReceiverPowerError) -> SDBus {
        do { return try SDBus() } catch { throw ReceiverPowerError("\(error)") }
    }

    /// The modems ModemManager has (its objects with the Location interface).
    private static func modems(on bus: SDBus) throws(ReceiverPowerError) -> [String] {
        let reply: BusMessage
        do {
            reply = try bus.call(service, path: "/org/freedesktop/ModemManager1", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        } catch {
            throw ReceiverPowerError("ModemManager is not on the system bus (\(error)): is it running? (`systemctl status ModemManager`)")
        }
        defer { reply.release() }
        var modems: [String] = []
        guard reply.enter("a", "{oa{sa{sv}}}") else { return [] }
        while reply.enter("e", "oa{sa{sv}}") {
            let path = reply.readString("o")
            if reply.enter("a", "{sa{sv}}") {
                while reply.enter("e", "sa{sv}") {
                    if reply.readString() == location, let path { modems.append(path) }
                    reply.skip("a{sv}")
                    reply.exit()
                }
                reply.exit()
            }
            reply.exit()
        }
        reply.exit()
        return modems
    }

    /// The Location interface's property `name` of `modem`, of D-Bus `type`, as `read` takes it.
    private static func property<Value>(
        _ name: String, of modem: String, type: String = "u", on bus: SDBus, _ read: (BusMessage) -> Value?
    ) throws(ReceiverPowerError) -> Value {
        let reply: BusMessage
        do {
            reply = try bus.property(service, path: modem, interface: location, name: name, type: type)
        } catch {
            throw ReceiverPowerError("cannot read \(name) of \(modem) from ModemManager: \(error)")
        }
        defer { reply.release() }
        guard let value = read(reply) else { throw ReceiverPowerError("\(location).\(name) of \(modem) is unreadable") }
        return value
    }
}
