package import Foundation
package import LocationKeepAlive
package import Testing
import TestWaiting

/// A child process whose output goes to a file, killed when the value goes away. It starts
/// with no signal blocked (the test runner's threads block some, and a child inherits the
/// mask: mosquitto ignored SIGTERM until this).
package final class ChildProcess {
    package let process = Process()
    package let outputPath: String

    package init(_ path: String, _ arguments: [String], output: String, environment: [String: String] = [:]) throws {
        outputPath = output
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            path,
        ] + arguments
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    package var pid: Int32 { process.processIdentifier }
    package var isRunning: Bool { process.isRunning }
    package var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Its last lines other than fixes, for a failure's message.
    package var tail: String { output.split(separator: "\n").filter { !$0.contains(#""class":"fix""#) }.suffix(20).joined(separator: "\n") }

    package func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Stops it with SIGTERM and expects exit 0 within `timeout`, with its last lines if not.
    package func expectCleanStop(timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async {
        signal(SIGTERM)
        let status = await wait(timeout: timeout)
        #expect(status == 0, "exit \(status):\n\(tail)", sourceLocation: sourceLocation)
    }

    /// Waits for the process to end (at most `timeout`, scaled), killing it after that, or at
    /// once when the task is cancelled.
    @discardableResult
    package func wait(timeout: Duration = .seconds(30)) async -> Int32 {
        let process = process
        _ = try? await holds(within: timeout) { !process.isRunning }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            guard await process.ended() else { return -1 }
        }
        return process.terminationStatus
    }
}

/// Waits (real time) until `condition` holds; fails the test with `what` after `timeout`
/// (scaled), or with the error `condition` throws.
///
/// The condition reads journals, files and processes' output, blocking calls: it is asked on a
/// thread of its own every 50 ms (``holds(within:every:_:)``), never on the concurrency pool,
/// where a journal opened while the service commits can wait out SQLite's busy timeout holding
/// one of the pool's threads, and a condition asked every 10 ms kept one busy under
/// ThreadSanitizer.
package func eventually(
    _ what: String,
    timeout: Duration = .seconds(60),
    context: (() -> String)? = nil,
    _ condition: @escaping () throws -> Bool
) async throws {
    // Unchecked: the condition runs on the wait's thread alone while this task awaits it.
    let asked = OffThePool(condition)
    let held = try await holds(within: timeout, every: .milliseconds(50)) { asked.holds() }
    if let failure = asked.failure.withLock({ $0 }) { throw failure }
    guard !held else { return }
    throw ToolMissing("timed out after \(TestTime.bound(timeout)) waiting for \(what)" + (context.map { ":\n" + $0() } ?? ""))
}

/// A throwing condition asked from the wait's thread: an error ends the wait and is kept.
private final class OffThePool: @unchecked Sendable {
    private let condition: () throws -> Bool
    let failure = Locked<(any Error)?>(nil)

    init(_ condition: @escaping () throws -> Bool) { self.condition = condition }

    func holds() -> Bool {
        do {
            return try condition()
        } catch {
            failure.withLock { $0 = error }
            return true
        }
    }
}

/// A real mosquitto broker on a free loopback port, with a config the test writes:
/// anonymous, with a password file, or TLS with a CA made by `openssl`; persistent, so a
/// killed broker comes back with its queued messages.
package final class MosquittoBroker {
    package enum Security {
        case anonymous
        case password(user: String, password: String)
        case tls
    }

    package private(set) var port: Int
    package let directory: String
    package let security: Security
    /// The network namespace it runs in (`nil`: the test's own) and the address it listens on:
    /// `localhost` is both loopbacks, 127.0.0.1 and ::1, as Debian's broker listens with no
    /// listener configured (Debian's /etc/hosts names ::1 localhost too, and libmosquitto
    /// connects to a name's first address only).
    package let namespace: String?
    package let address: String
    package private(set) var process: ChildProcess?
    package private(set) var starts = 0

    package var caFile: String { "\(directory)/ca.pem" }

    package static func require() throws {
        let needed = ["/usr/sbin/mosquitto": "mosquitto", "/usr/bin/mosquitto_sub": "mosquitto-clients", "/usr/bin/openssl": "openssl"]
        let missing = needed.filter { !FileManager.default.fileExists(atPath: $0.key) }
        guard missing.isEmpty else {
            throw ToolMissing(
                "mosquitto is not installed (missing \(missing.keys.sorted().joined(separator: ", "))): run "
                    + "`sudo apt-get install -y mosquitto mosquitto-clients openssl` or `scripts/setup`"
            )
        }
    }

    package init(
        security: Security = .anonymous,
        port: Int? = nil,
        directory: String? = nil,
        namespace: String? = nil,
        address: String = "127.0.0.1"
    ) async throws {
        try Self.require()
        self.namespace = namespace
        self.address = address
        if let port { self.port = port } else { self.port = try await Tools.freePort() }
        self.security = security
        self.directory = directory ?? NSTemporaryDirectory() + "mosquitto-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: self.directory + "/data", withIntermediateDirectories: true)
        var config = """
            user root
            persistence true
            persistence_location \(self.directory)/data/
            autosave_interval 1
            autosave_on_changes true
            max_queued_messages 100000
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            log_type subscribe

            """
        switch security {
        case .anonymous:
            config += "allow_anonymous true\n"
        case .password(let user, let password):
            _ = try await run("/usr/bin/mosquitto_passwd", ["-b", "-c", "\(self.directory)/passwords", user, password])
            config += "allow_anonymous false\npassword_file \(self.directory)/passwords\n"
        case .tls:
            try await Self.makeCertificates(in: self.directory)
            config += "allow_anonymous true\ncafile \(caFile)\ncertfile \(self.directory)/server.pem\nkeyfile \(self.directory)/server.key\n"
        }
        try config.write(toFile: "\(self.directory)/settings.conf", atomically: true, encoding: .utf8)
        // A port picked free can be taken by a parallel test before mosquitto binds it: then
        // mosquitto exits, and the other test's listener must not pass for it. A new port, then.
        for attempt in 1... {
            do {
                try await start()
                return
            } catch let taken as PortTaken where port == nil && attempt < 5 {
                print("mosquitto: \(taken); another port")
                self.port = try await Tools.freePort()
            }
        }
    }

    deinit {
        process?.signal(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the broker and waits until it accepts connections.
    package func start() async throws {
        starts += 1
        let settings = try String(contentsOfFile: "\(directory)/settings.conf", encoding: .utf8)
        let addresses = address == "localhost" ? ["127.0.0.1", "::1"] : [address]
        let listeners = addresses.map { "listener \(self.port) \($0)\n" }.joined()
        try (listeners + settings).write(toFile: "\(directory)/mosquitto.conf", atomically: true, encoding: .utf8)
        let command = ["/usr/sbin/mosquitto", "-c", "\(directory)/mosquitto.conf"]
        let inNamespace = namespace.map { ["/usr/sbin/ip", "netns", "exec", $0] } ?? []
        let full = inNamespace + command
        let process = try ChildProcess(full[0], Array(full.dropFirst()), output: "\(directory)/broker-\(starts).log")
        self.process = process
        let (port, address, namespace) = (port, addresses[0], namespace)
        // Its own listener: it says it runs only once it has bound the port (one that could not
        // bind says so and exits), and the port accepts.
        try await eventually("mosquitto to listen on \(address):\(port)", context: { process.output }) {
            let said = process.output
            if said.contains("Address already in use") { throw PortTaken(port: port) }
            guard process.isRunning else { throw ToolMissing("mosquitto ended at its start:\n\(said)") }
            // In a namespace, asked from inside it: its loopback is not the test's.
            let accepts = namespace.map { NetworkNamespace.accepts(in: $0, port: port, address: address) }
                ?? Self.accepts(port: port, address: address)
            return said.contains(" running") && accepts
        }
    }

    /// Another process listened on the port mosquitto was to take.
    package struct PortTaken: Error, CustomStringConvertible {
        package let port: Int
        package var description: String { "port \(port) was taken" }
    }

    /// What the broker logged since its last start (who connected, what each subscribed to,
    /// and how each went away).
    package var log: String { process?.output ?? "" }

    /// How many times since its last start the broker took `client`'s subscription to `topic`
    /// (its log's `CLIENT QOS TOPIC` lines).
    package func subscriptions(of client: String, to topic: String) -> Int {
        log.split(separator: "\n").count { $0.hasSuffix(": \(client) 1 \(topic)") || $0.hasSuffix(": \(client) 0 \(topic)") }
    }

    /// Kills the broker (SIGKILL: no goodbye to anyone).
    package func kill() async {
        process?.signal(SIGKILL)
        await process?.wait()
    }

    /// Stops the broker (SIGTERM: it saves its queues and closes every connection).
    package func stop() async {
        let start = ContinuousClock.now
        process?.signal(SIGTERM)
        await process?.wait(timeout: .seconds(5))
        let took = start.duration(to: .now)
        if took > .seconds(4) { print("mosquitto took \(took) to stop on SIGTERM: killed") }
    }

    package static func accepts(port: Int, address text: String = "127.0.0.1") -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, text, &address.sin_addr)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A CA and a broker certificate for 127.0.0.1, made with openssl.
    package static func makeCertificates(in directory: String) async throws {
        let openssl = "/usr/bin/openssl"
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(directory)/san.ext", atomically: true, encoding: .utf8)
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(directory)/ca.key", "-out", "\(directory)/ca.pem",
             "-days", "2", "-subj", "/CN=keepalive test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(directory)/server.key", "-out", "\(directory)/server.csr",
             "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "\(directory)/server.csr", "-CA", "\(directory)/ca.pem", "-CAkey", "\(directory)/ca.key",
             "-CAcreateserial", "-out", "\(directory)/server.pem", "-days", "2", "-extfile", "\(directory)/san.ext"],
        ] {
            let result = try await runCommand(openssl, arguments)
            guard result.exitCode == 0 else { throw ToolMissing("openssl \(arguments[0]) failed: \(result.error)") }
        }
    }
}

/// `mosquitto_sub` as an independent subscriber with a persistent session (QoS 1, so what
/// arrives while it is disconnected is kept for it), printing `topic payload` lines.
package final class MosquittoSubscriber {
    package let process: ChildProcess

    package init(_ broker: MosquittoBroker, topic: String = "owntracks/#", extra: [String] = []) async throws {
        let output = "\(broker.directory)/sub-\(UUID().uuidString.prefix(6)).out"
        let namespace = broker.namespace.map { ["/usr/sbin/ip", "netns", "exec", $0] } ?? []
        let connection = ["-h", broker.address, "-p", "\(broker.port)", "-q", "1"] + extra
        let command =
            namespace + ["/usr/bin/mosquitto_sub", "-t", topic, "-c", "-i", "sub-\(UUID().uuidString.prefix(8))", "-v"]
            + connection
        let process = try ChildProcess(command[0], Array(command.dropFirst()), output: output)
        self.process = process
        // Subscribed before anything is published, and its session saved by the broker (which
        // saves on every change): a probe on the topic, published again until it comes back.
        let probeTopic = topic.replacingOccurrences(of: "#", with: "probe").replacingOccurrences(of: "+", with: "probe")
        let probe = namespace + ["/usr/bin/mosquitto_pub", "-t", probeTopic, "-m", "probe"] + connection
        let deadline = ContinuousClock.now + Tools.patience
        while !process.output.contains("\(probeTopic) probe") {
            guard ContinuousClock.now < deadline else {
                throw ToolMissing("mosquitto_sub never received its probe: \(process.output.suffix(300))")
            }
            _ = try await runCommand(probe[0], Array(probe.dropFirst()))
            try? await eventually("the probe at the subscriber", timeout: .seconds(1)) {
                process.output.contains("\(probeTopic) probe")
            }
        }
    }

    /// The OwnTracks messages received so far, in order, but for the device's presence (its
    /// retained `status`, its will `lwt`) and the commands sent to it.
    package var messages: [OwnTracksMessage] {
        allMessages.filter { !$0.isPresence && !$0.topic.hasSuffix("/cmd") }
    }

    /// Every OwnTracks message received so far, in order.
    package var allMessages: [OwnTracksMessage] {
        process.output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return OwnTracksMessage(topic: String(parts[0]), json: String(parts[1]))
        }
    }
}

/// One OwnTracks `location` message as a subscriber saw it.
package struct OwnTracksMessage: Hashable {
    package var topic: String
    package var fields: [String: Double]
    package var strings: [String: String]

    package init?(topic: String, json: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        self.topic = topic
        fields = object.compactMapValues { ($0 as? NSNumber)?.doubleValue }
        strings = object.compactMapValues { $0 as? String }
    }

    /// The device's presence, not a delivery: its retained `status`, its will `lwt`.
    package var isPresence: Bool { topic.hasSuffix("/status") || strings["_type"] == "lwt" }

    /// What identifies a fix across deliveries: its id and time.
    package var key: String { "\(strings["_id"] ?? "?")@\(Int(fields["tst"] ?? 0))" }
}

/// Counts for a fault test: produced, journaled, delivered, delivered twice, lost (must be 0).
package struct DeliveryCounts: CustomStringConvertible {
    package var produced: Int
    package var journaled: Int
    package var delivered: Int
    package var deliveredTwice: Int
    package var lost: Int

    /// Compares the journal's records with what the subscriber received.
    package init(produced: Int, journal: [JournalRecord], received: [String]) {
        self.produced = produced
        journaled = journal.count
        let keys = journal.map { "\($0.shortID)@\(Int(($0.location.timestamp ?? $0.recordedAt).timeIntervalSince1970))" }
        var seen: [String: Int] = [:]
        for key in received { seen[key, default: 0] += 1 }
        delivered = keys.filter { seen[$0] != nil }.count
        deliveredTwice = seen.values.filter { $0 > 1 }.count
        lost = keys.filter { seen[$0] == nil }.count
    }

    package var description: String {
        "produced \(produced), journaled \(journaled), delivered \(delivered), delivered twice \(deliveredTwice), lost \(lost)"
    }
}

/// A journal written only by the test, and all its records.
package func allRecords(_ path: String) throws -> [JournalRecord] {
    // Read-only: a test's look never writes (a read-write open migrates and applies retention,
    // racing the service's commits for the file's lock).
    let journal = try FixJournal(file: URL(fileURLWithPath: path), access: .readOnly)
    var records: [JournalRecord] = []
    try journal.forEachRecord { records.append($0) }
    return records
}
