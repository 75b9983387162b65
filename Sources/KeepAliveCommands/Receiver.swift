import ArgumentParser
import KeepAliveCore
import KeepAliveReceiver

/// `keepalive receiver on|off|which`: the receiver's power switched by hand, the way `run`
/// switches it (gpsctl's and mmcli's jobs, one command for every way).
struct Receiver: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Switch the GNSS receiver on or off, or say which way switches it.",
        discussion: """
            on: powers the receiver up (a u-blox through gpsd is woken; a modem's GNSS started through ModemManager).
            off: powers it down (a u-blox into backup, keeping its ephemeris: the next start is hot within 4 hours; a modem's GNSS stopped).
            which: names the way --receiver-power chooses here, and the device.
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case on, off, which
    }

    @Argument(help: "on, off or which.")
    var action: Action

    @Option(name: .customLong("receiver-power"), help: ArgumentHelp("auto, ubx, modemmanager, hook or off.", valueName: "way"))
    var way: Parsed<ReceiverPowerWay> = "auto"

    @Option(name: .customLong("gpsd"), help: ArgumentHelp("gpsd to ask (ubx, auto).", valueName: "host:port"))
    var gpsd: String = "localhost:2947"

    func run() async throws {
        var options = SourceOptions()
        options.gpsd = gpsd
        let (host, port) = try options.endpoint()
        let control: any ReceiverPowerControl
        do { control = try await ReceiverPower.choose(way.value, gpsdHost: host, gpsdPort: port) } catch {
            throw ValidationError("--receiver-power \(way.value): \(error)")
        }
        let what = Self.describe(control)
        do throws(ReceiverPowerError) {
            switch action {
            case .which: Console.out("\(what)\n")
            case .on:
                try await control.switchOn()
                Console.out("receiver on: \(what)\n")
            case .off:
                try await control.switchOff()
                Console.out("receiver off: \(what)\n")
            }
        } catch {
            Console.error("keepalive receiver \(action.rawValue): \(error)\n")
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
    }

    static func describe(_ control: any ReceiverPowerControl) -> String {
        switch control {
        case let ubx as UBXThroughGPSD: "ubx, \(ubx.path) through gpsd at \(ubx.host):\(ubx.port)"
        case let modem as ModemManagerGNSS: "modemmanager, \(modem.modem) (GPS sources \(modem.gpsSources))"
        case let hook as DeviceHookPower: "hook, gpsd runs \(hook.path)"
        case let finder as ReceiverPowerFinder where !finder.isDecided:
            "\(finder.way), not decided yet: gpsd has not identified its receiver (it opens a device for its first watcher)"
        default: "off: nothing switches the receiver here"
        }
    }
}
