import Foundation
import TestWaiting

/// A system bus of the test's own (`dbus-daemon` with its own configuration and no service
/// folders, so no system service is ever started on it), for a stand-in of a system service or
/// a service of ours; killed when this goes.
package final class PrivateSystemBus {
    package let directory: String
    /// Its address, for `DBUS_SYSTEM_BUS_ADDRESS`.
    package let address: String
    private let daemon: ChildProcess

    /// Anyone may own any name and call anything: for a stand-in of a system service.
    package static let permissive = """
        <allow own="*"/>
        <allow send_type="method_call"/>
        """

    /// A bus whose default policy lets anyone send signals and replies and receive anything, and
    /// adds `policy` (rules of its default context) and `include` (a policy file), in `directory`
    /// (made if missing).
    package init(in directory: String, policy: String = PrivateSystemBus.permissive, include: String? = nil) async throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/dbus-daemon") else {
            throw ToolMissing("dbus-daemon is not installed: run `sudo apt-get install -y dbus-daemon` or `scripts/setup`")
        }
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        address = "unix:path=\(directory)/system_bus_socket"
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                \(policy)
              </policy>
              \(include.map { "<include>\($0)</include>" } ?? "")
            </busconfig>
            """
        try configuration.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        daemon = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--nofork", "--nopidfile", "--config-file=\(directory)/bus.conf"], output: directory + "/bus.log"
        )
        let socket = directory + "/system_bus_socket"
        try await eventually("dbus-daemon to listen on \(socket)", context: { [daemon] in daemon.output }) { FileManager.default.fileExists(atPath: socket) }
    }

    /// Kills the daemon without waiting for it (Foundation reaps it).
    deinit {
        daemon.signal(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
