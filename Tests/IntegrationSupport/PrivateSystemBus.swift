import Foundation
import TestWaiting

/// A system bus of the test's own (`dbus-daemon` with a configuration that lets anyone own any
/// name and call anything), for a stand-in of a system service; killed when this goes.
package final class PrivateSystemBus {
    package let directory: String
    /// Its address, for `DBUS_SYSTEM_BUS_ADDRESS`.
    package let address: String
    private let daemon: ChildProcess

    package init() async throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/dbus-daemon") else {
            throw ToolMissing("dbus-daemon is not installed: run `sudo apt-get install -y dbus-daemon` or `scripts/setup`")
        }
        guard FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbus/__init__.py") else {
            throw ToolMissing("python3-dbus is not installed (the ModemManager stand-in): run `sudo apt-get install -y python3-dbus` or `scripts/setup`")
        }
        directory = NSTemporaryDirectory() + "bus-\(UUID().uuidString.prefix(8))"
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
                <allow own="*"/>
                <allow send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        daemon = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--nofork", "--nopidfile", "--config-file=\(directory)/bus.conf"], output: directory + "/bus.log"
        )
        let socket = directory + "/system_bus_socket"
        try await eventually("dbus-daemon to listen on \(socket)", context: { [daemon] in daemon.output }) { FileManager.default.fileExists(atPath: socket) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
