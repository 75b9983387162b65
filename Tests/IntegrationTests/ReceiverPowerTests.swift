import Foundation
import IntegrationSupport
import LocationKeepAlive
import Testing

/// The receiver's power through the real paths, on `gnss-receiver` (a u-blox M8 simulated on a
/// pseudo-terminal) under the real gpsd: our power-down written through gpsd reaches it, a wake
/// starts it hot; ModemManager's path against its stand-in on a private system bus.
@Suite(.timeLimit(.minutes(3)))
struct ReceiverPowerTests {
    /// The stand-in of ModemManager, and its private bus, with an install hint when a part is missing.
    private func modemManager(capabilities: Int? = nil, commands: String) async throws -> (bus: PrivateSystemBus, standIn: ChildProcess) {
        guard FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbus/__init__.py") else {
            throw ToolMissing("python3-dbus is not installed (the ModemManager stand-in): run `sudo apt-get install -y python3-dbus` or `scripts/setup`")
        }
        let bus = try await PrivateSystemBus(in: NSTemporaryDirectory() + "modemmanager-\(UUID().uuidString.prefix(8))")
        let standIn = try ChildProcess(
            Tools.repository.appendingPathComponent("Mocks/Receiver/modemmanager-standin").path,
            ["--commands", commands, "--log", bus.directory + "/calls.log"] + (capabilities.map { ["--capabilities", "\($0)"] } ?? []),
            output: bus.directory + "/standin.out", environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
        )
        try await eventually("the ModemManager stand-in on the bus", context: { standIn.output }) { standIn.output.contains("ready") }
        return (bus, standIn)
    }

    @Test func gpsdPassesOurPowerDownToTheReceiverAndTheNextFixIsAHotStart() async throws {
        let rig = try await SimulatedReceiverUnderGPSD()
        let found = try await UBXThroughGPSD.find(host: "127.0.0.1", port: rig.port)
        let control = try #require(found, "gpsd drives the simulated u-blox:\n\(rig.gpsdLog)")
        #expect(control.path == rig.device)
        let notes = Locked<[ReceiverPowerNote]>([])
        let power = ReceiverPowerSwitch(control: control, notes: { note in notes.withLock { $0.append(note) } })
        let manager = LocationManager(source: GPSDSource(host: "127.0.0.1", port: rig.port), receiverPower: power)

        _ = try await manager.requestLocation(timeout: Tools.patience)
        await power.settled()
        try await eventually("the receiver put into backup by our UBX-RXM-PMREQ, written through gpsd", context: { "\(rig.events)\n\(rig.gpsdLog)" }) {
            rig.events.last == "backup:UBX-RXM-PMREQ"
        }
        #expect(!power.duty.isOn, "off as soon as the one-shot had its fix, not gpsd's 60 s later")
        // Asleep for 3 s: gpsd's last fix, older than its 2 s freshness, is no answer then.
        let quiet = rig.log.count
        try await Task.sleep(for: .seconds(3))
        #expect(rig.log.count == quiet, "nothing happens to a receiver in backup: \(rig.events)")

        let fix = try await manager.requestLocation(timeout: Tools.patience)
        await power.settled()
        #expect(abs(fix.latitude - 52.52) < 0.001)
        let log = rig.log
        let woken = try #require(log.lastIndex { $0.event == "on" }, "\(rig.events)")
        #expect(log[woken].cause == "input", "woken by the bytes we wrote through gpsd: \(rig.events)")
        #expect(log[woken].start == "hot", "backup kept its ephemeris: a hot start")
        #expect(log.dropFirst(woken).contains { $0.event == "fix" && $0.timeToFix == 1 }, "the model's hot start: 1 s")
        let told = notes.withLock { $0 }
        #expect(told.contains { if case .fixed(.hot, _) = $0 { true } else { false } }, "\(told)")
        #expect(power.switches >= 4, "on, off, on, off: \(power.switches); \(told)")
    }

    @Test func autoDecidesAtTheFirstSwitchWhereGpsdOpensTheDeviceForItsFirstWatcher() async throws {
        // gpsd as Debian starts it: the device opened, and identified, for the first watcher.
        let rig = try await SimulatedReceiverUnderGPSD(opensForItsFirstWatcher: true)
        let control = try await ReceiverPower.choose(.auto, gpsdHost: "127.0.0.1", gpsdPort: rig.port, hook: rig.directory + "/no-hook")
        #expect(control.way == .auto, "not decided: gpsd has not identified its device")
        let power = ReceiverPowerSwitch(control: control)
        #expect(!power.switchesTheReceiver)
        let manager = LocationManager(source: GPSDSource(host: "127.0.0.1", port: rig.port), receiverPower: power)
        // A watch opens the device; gpsd identifies the u-blox while it runs (its probe answered
        // within a few seconds), and the switch off at the watch's end decides.
        let watch = Task { for try await _ in manager.updates() {} }
        try await eventually("gpsd to identify the receiver", context: { rig.gpsdLog }) { rig.gpsdLog.contains("identified as type u-blox") }
        watch.cancel()
        _ = await watch.result
        await power.settled()
        #expect(power.way == .ubx && power.switchesTheReceiver, "decided: \(power.way)")
        try await eventually("the receiver put into backup once decided", context: { "\(rig.events)" }) {
            rig.events.last == "backup:UBX-RXM-PMREQ"
        }
    }

    @Test func aColdResetMakesTheNextStartCold() async throws {
        let rig = try await SimulatedReceiverUnderGPSD()
        let control = UBXThroughGPSD(host: "127.0.0.1", port: rig.port, path: rig.device)
        try await control.reset(.cold)
        try await eventually("the receiver restarted cold by UBX-CFG-RST", context: { "\(rig.events)" }) {
            rig.log.last { $0.event == "on" }.map { $0.cause == "UBX-CFG-RST" && $0.start == "cold" } ?? false
        }
    }

    @Test func modemManagersLocationSwitchesTheModemsGNSS() async throws {
        let rig = try await SimulatedReceiverUnderGPSD()
        let (bus, standIn) = try await modemManager(commands: rig.commands)
        defer { withExtendedLifetime(standIn) {} }
        func receiver(_ words: String...) async throws -> CommandResult {
            try await runCommand("/usr/bin/env", ["DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)", try Tools.keepalive.path, "receiver"] + words)
        }
        let which = try await receiver("which", "--receiver-power", "modemmanager")
        #expect(which.lines == ["modemmanager, /org/freedesktop/ModemManager1/Modem/0 (GPS sources 16)"], "\(which.error)")
        for action in ["on", "off", "on"] {
            let result = try await receiver(action, "--receiver-power", "modemmanager")
            #expect(result.exitCode == 0, "\(action): \(result.error)")
        }
        let calls = try String(contentsOfFile: bus.directory + "/calls.log", encoding: .utf8).split(separator: "\n")
        let sources = calls.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.compactMap { $0["sources"] as? Int }
        #expect(sources == [17, 1, 17], "unmanaged GPS added to the cell's source, taken away, added: \(calls)")
        try await eventually("the GNSS switched off and on by the modem's commands", context: { "\(rig.events)" }) {
            rig.events.filter { $0 != "fix" }.suffix(2) == ["off:command", "on:command"]
        }
        #expect(rig.log.last { $0.event == "on" }?.start == "hot", "the modem's engine kept its ephemeris")
    }

    @Test func aModemWithoutGPSIsRefusedWithAMessage() async throws {
        let (bus, standIn) = try await modemManager(capabilities: 1, commands: "/dev/null")
        defer { withExtendedLifetime(standIn) {} }
        let result = try await runCommand(
            "/usr/bin/env", ["DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)", try Tools.keepalive.path, "receiver", "off", "--receiver-power", "modemmanager"]
        )
        #expect(result.exitCode != 0)
        #expect(result.error.contains("ModemManager has no modem with GPS"), "\(result.error)")
    }
}
