import Foundation

/// A network namespace of the test's own with its loopback up, so that gpsd, a broker and a
/// program can use their usual ports (2947, 1883) beside whatever the machine runs on them.
/// ``remove()`` kills what still runs in it and removes it: a test calls it in a `defer`. Its
/// drop does the same, but only as a fallback: the last reference can go on a wait's thread as
/// the test process exits, and two namespaces were left so. Needs root (CI runs as root).
package final class NetworkNamespace {
    package let name: String
    private var removed = false

    /// /etc/hosts as Debian's installer writes it: `localhost` is ::1 and 127.0.0.1, in the order
    /// a resolver gives ::1 first.
    package static let debianHosts = "127.0.0.1\tlocalhost\n127.0.1.1\tdebian\n\n::1\tlocalhost ip6-localhost ip6-loopback\n"

    /// A namespace; given `hosts`, what runs inside reads it as /etc/hosts (`ip netns exec`
    /// binds /etc/netns/NAME/hosts over it), not this machine's.
    package init(hosts: String? = nil) async throws {
        name = "keepalive-test-\(UUID().uuidString.prefix(6).lowercased())"
        if let hosts {
            try FileManager.default.createDirectory(atPath: "/etc/netns/\(name)", withIntermediateDirectories: true)
            try hosts.write(toFile: "/etc/netns/\(name)/hosts", atomically: true, encoding: .utf8)
        }
        for command in [["netns", "add", name], ["-n", name, "link", "set", "lo", "up"]] {
            let result = try await runCommand("/usr/sbin/ip", command)
            guard result.exitCode == 0 else {
                throw ToolMissing(
                    "ip \(command.joined(separator: " ")) failed (a network namespace needs root and iproute2; CI runs as "
                        + "root): \(result.error)"
                )
            }
        }
    }

    deinit { remove() }

    /// Kills what runs inside and removes the namespace, once (a command of moments, run to its end).
    package func remove() {
        guard !removed else { return }
        removed = true
        runToEnd("/bin/sh", ["-c", "ip netns pids \(name) | xargs -r kill -9; ip netns delete \(name); rm -rf /etc/netns/\(name)"])
    }

    /// `path` with `arguments`, run inside: what to give ``ChildProcess`` or ``runCommand(_:_:)``.
    package func command(_ path: String, _ arguments: [String]) -> (path: String, arguments: [String]) {
        ("/usr/sbin/ip", ["netns", "exec", name, path] + arguments)
    }

    /// Whether something accepts connections on `address`:`port` inside: a command of moments
    /// run to its end, so only from a condition ``eventually(_:timeout:context:_:)`` asks off the pool.
    package func accepts(port: Int, address: String = "127.0.0.1") -> Bool {
        Self.accepts(in: name, port: port, address: address)
    }

    /// ``accepts(port:address:)`` in the namespace `name`.
    package static func accepts(in name: String, port: Int, address: String) -> Bool {
        let connect = """
            import socket, sys
            try:
                socket.create_connection((sys.argv[1], int(sys.argv[2])), 2).close()
            except OSError:
                sys.exit(1)
            """
        return runToEnd("/usr/sbin/ip", ["netns", "exec", name, "/usr/bin/python3", "-c", connect, address, String(port)]) == 0
    }
}
