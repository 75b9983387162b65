import Foundation
import Glibc
import LocationKeepAlive
import IntegrationSupport
import TestWaiting
import Testing

/// A private system bus (`dbus-daemon` with its own configuration, which includes the
/// project's policy `dbus/keepalive-geoclue.conf` and no service folders, so Debian's own
/// GeoClue is never started on it), and `keepalive host --geoclue` on it, reading a real gpsd.
/// Every process it starts gets `DBUS_SYSTEM_BUS_ADDRESS` and the test's own authorization
/// store (`XDG_CONFIG_HOME`).
final class GeoClueHarness {
    private let bus: PrivateSystemBus
    var directory: String { bus.directory }
    var address: String { bus.address }
    private(set) var host: ChildProcess?

    static let probe = Tools.repository.appendingPathComponent("scripts/geoclue-probe").path
    static let whereAmI = "/usr/libexec/geoclue-2.0/demos/where-am-i"

    /// Fails with an install hint when a part is missing. Never skips.
    static func require() throws {
        let needed = [
            "/usr/bin/dbus-daemon": "dbus-daemon",
            "/usr/bin/gdbus": "libglib2.0-bin",
            whereAmI: "geoclue-2-demo",
            "/usr/libexec/geoclue-2.0/demos/agent": "geoclue-2-demo",
            "/usr/lib/x86_64-linux-gnu/girepository-1.0/Geoclue-2.0.typelib": "gir1.2-geoclue-2.0",
            "/usr/lib/python3/dist-packages/gi/__init__.py": "python3-gi",
            "/usr/bin/stdbuf": "coreutils",
        ]
        let missing = needed.filter { !FileManager.default.fileExists(atPath: $0.key) }
        guard missing.isEmpty else {
            throw ToolMissing(
                "GeoClue's clients or D-Bus are not installed (missing \(missing.keys.sorted().joined(separator: ", "))): run "
                    + "`sudo apt-get install -y \(Set(missing.values).sorted().joined(separator: " "))` or `scripts/setup`"
            )
        }
    }

    init() async throws {
        try Self.require()
        bus = try await PrivateSystemBus(
            in: NSTemporaryDirectory() + "geoclue-\(UUID().uuidString.prefix(8))",
            policy: """
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_destination="org.freedesktop.DBus"/>
                """,
            include: Tools.repository.path + "/dbus/keepalive-geoclue.conf"
        )
        try FileManager.default.createDirectory(atPath: directory + "/config", withIntermediateDirectories: true)
    }

    /// Kills the host and the bus without waiting for them (nothing can be awaited here, and
    /// `waitUntilExit()` must not be called from a task: ProcessEnd.swift); Foundation reaps them.
    deinit {
        host?.signal(SIGKILL)  // the bus goes with it, and its folder
    }

    /// What every process of the test is started with.
    var environment: [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": address, "XDG_CONFIG_HOME": directory + "/config", "LC_ALL": "C.UTF-8", "TZ": "UTC"]
    }

    /// Starts `keepalive host --geoclue` on gpsd at `port` and waits until it serves the name.
    func startHost(gpsd port: Int, extra: [String] = []) async throws {
        let host = try ChildProcess(
            try Tools.keepalive.path,
            ["host", "--geoclue", "--json", "--freezer", "signal", "--socket", directory + "/host.sock",
             "--monitors", directory + "/monitors", "--gpsd", "127.0.0.1:\(port)"] + extra,
            output: directory + "/host.out", environment: environment
        )
        self.host = host
        try await eventually("the host to serve GeoClue2\n\(host.output)") {
            guard host.isRunning else { throw ToolMissing("the host ended:\n\(host.output)") }
            return host.output.contains(#""event":"geoclue""#)
        }
    }

    /// The host's JSON lines.
    var events: [[String: Any]] {
        (host?.output ?? "").split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// `keepalive auth set STATUS --app APP` in the test's store.
    func authorize(_ app: String, _ status: String, accuracy: String = "full") async throws {
        let result = try await run(try Tools.keepalive.path, ["auth", "set", status, "--app", app, "--accuracy", accuracy])
        #expect(result.status == 0, "auth set: \(result.output)")
    }

    /// Runs a command with the test's environment to its end (killed after `timeout`).
    func run(_ path: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (status: Int32, output: String) {
        let command = try ChildProcess(path, arguments, output: directory + "/run-\(UUID().uuidString.prefix(6)).out", environment: environment)
        let status = await command.wait(timeout: timeout)
        return (status, command.output)
    }

    /// Starts `geoclue-probe follow` (libgeoclue's GClueSimple) in the background.
    func follow(_ desktopID: String, accuracy: Int = 8, time: Int = 0, distance: Int = 0, seconds: Double = 30) throws -> ChildProcess {
        try ChildProcess(
            Self.probe, ["follow", desktopID, "\(accuracy)", "\(time)", "\(distance)", "\(seconds)"],
            output: directory + "/follow-\(UUID().uuidString.prefix(6)).out", environment: environment
        )
    }

    /// `gdbus call --system` on the service.
    func gdbus(_ path: String, _ method: String, _ arguments: [String] = []) async throws -> (status: Int32, output: String) {
        try await run("/usr/bin/gdbus", ["call", "--system", "--dest", "org.freedesktop.GeoClue2", "--object-path", path, "--method", method] + arguments)
    }
}

/// `geoclue-probe raw`: one bus connection the test keeps open and sends requests on.
/// Its answers are read on a thread of its own and awaited with a bound: a test's task never
/// blocks one of the few threads Swift's tasks share (two blocked reads stop every other test).
final class RawGeoClueClient: Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lines = Locked(Lines())
    /// Its unique name on the bus.
    let name: String

    private struct Lines {
        var complete: [Data] = []
        var partial = Data()
        var ended = false
    }

    init(_ harness: GeoClueHarness) async throws {
        process.executableURL = URL(fileURLWithPath: GeoClueHarness.probe)
        process.arguments = ["raw"]
        process.environment = ProcessInfo.processInfo.environment.merging(harness.environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let reading = output.fileHandleForReading
        Thread.detachNewThread { [lines] in
            while case let chunk = reading.availableData, !chunk.isEmpty {
                lines.withLock { lines in
                    lines.partial += chunk
                    while let newline = lines.partial.firstIndex(of: UInt8(ascii: "\n")) {
                        lines.complete.append(Data(lines.partial[..<newline]))
                        lines.partial = Data(lines.partial[(newline + 1)...])
                    }
                }
            }
            lines.withLock { $0.ended = true }
        }
        name = try await Self.answer(lines)["name"] as? String ?? ""
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// Sends one request and returns its answer.
    @discardableResult
    func send(_ request: [String: Any]) async throws -> [String: Any] {
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: request) + Data("\n".utf8))
        return try await Self.answer(lines)
    }

    func call(_ path: String, _ interface: String, _ method: String, signature: String? = nil, _ arguments: [Any] = []) async throws -> [String: Any] {
        var request: [String: Any] = ["op": "call", "path": path, "interface": interface, "method": method, "args": arguments]
        if let signature { request["signature"] = signature }
        return try await send(request)
    }

    func manager(_ method: String, signature: String? = nil, _ arguments: [Any] = []) async throws -> [String: Any] {
        try await call("/org/freedesktop/GeoClue2/Manager", "org.freedesktop.GeoClue2.Manager", method, signature: signature, arguments)
    }

    func set(_ path: String, _ property: String, _ signature: String, _ value: Any) async throws -> [String: Any] {
        try await send(["op": "set", "path": path, "interface": "org.freedesktop.GeoClue2.Client", "property": property, "signature": signature, "value": value])
    }

    func get(_ path: String, _ property: String, interface: String = "org.freedesktop.GeoClue2.Client") async throws -> [String: Any] {
        try await send(["op": "get", "path": path, "interface": interface, "property": property])
    }

    /// Kills the connection's process: the bus sees it leave.
    func kill() async throws {
        // SIGKILL: the test runner's blocked signals are inherited, SIGTERM would wait.
        Glibc.kill(process.processIdentifier, SIGKILL)
        try await eventually("geoclue-probe raw to end after SIGKILL") { [process] in !process.isRunning }
    }

    /// The next line the probe printed, as JSON, within a minute (scaled as every bound).
    private static func answer(_ lines: Locked<Lines>) async throws -> [String: Any] {
        let came = try await holds(within: .seconds(60)) { lines.withLock { !$0.complete.isEmpty || $0.ended } }
        let line = lines.withLock { $0.complete.isEmpty ? nil : $0.complete.removeFirst() }
        if let line { return try JSONSerialization.jsonObject(with: line) as? [String: Any] ?? [:] }
        if came { throw ToolMissing("geoclue-probe raw ended") }
        throw ToolMissing("geoclue-probe raw did not answer within \(Tools.bound(.seconds(60)))")
    }
}
