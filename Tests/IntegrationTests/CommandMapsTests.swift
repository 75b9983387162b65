import Foundation
import IntegrationSupport
import TestWaiting
import Testing

/// `keepalive` loads what each command uses: no command maps Foundation beyond
/// FoundationEssentials (nor ICU, which comes with it), and `watch`, `locate`, `auth`,
/// `simulate`, `monitor` and `run` without a journal never map SQLite, which a journal loads
/// when it opens.
/// Read from `/proc/PID/maps` while the command waits on a FIFO that the test holds shut; `auth`,
/// which never waits, from the loader's own list of what it maps (`LD_DEBUG=files`).
@Suite(.timeLimit(.minutes(2))) struct CommandMapsTests {
    /// Foundation's full library and its ICU: never mapped.
    static let foundation = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"]
    /// What only a journal loads.
    static let heavy = foundation + ["libsqlite3.so"]

    enum Command: String, CaseIterable, CustomTestStringConvertible {
        case watch, locate, auth, simulate, run, monitor

        var testDescription: String { rawValue }

        /// The command, waiting for `fifo` to be opened for writing.
        func arguments(fifo: String, folder: String) -> [String] {
            switch self {
            case .watch: ["watch", "--replay", fifo]
            case .locate: ["locate", "--replay", fifo, "--app", "maps", "--auth-file", "\(folder)/auth.json"]
            case .auth: ["auth", "status", "--app", "maps", "--auth-file", "\(folder)/auth.json"]
            case .simulate: ["simulate", "--location-log", fifo, "--strategy", "hybrid"]
            case .run: ["run", "--replay", fifo, "--audio-device", "null", "--app", "maps", "--auth-file", "\(folder)/auth.json"]
            case .monitor: ["monitor", "--replay", fifo, "--conditions", "\(folder)/conditions.json", "--state", "\(folder)/state.json"]
            }
        }
    }

    @Test(arguments: Command.allCases)
    func commandsWithoutAJournalMapNeitherFoundationNorSQLite(command: Command) async throws {
        let arguments = command.arguments(fifo: "FIFO", folder: "FOLDER")
        let maps = command == .auth ? try await Self.loaded(by: arguments) : try await Self.maps(of: arguments)
        let found = Self.heavy.filter { name in maps.contains { $0.hasSuffix("/" + name) || $0.contains("/" + name + ".") } }
        #expect(found.isEmpty, "keepalive \(command) mapped \(found)")
        #expect(maps.contains { $0.hasSuffix("/keepalive") }, "the maps read are keepalive's: \(maps.prefix(3))")
        #expect(maps.contains { $0.hasSuffix("/libswiftCore.so") }, "the maps were read whole")
    }

    /// The other side, so the check above can fail: with a journal, `run` maps SQLite, and
    /// still no Foundation beyond FoundationEssentials.
    @Test func runWithAJournalMapsSQLiteAndNoFoundation() async throws {
        let maps = try await Self.maps(of: [
            "run", "--replay", "FIFO", "--audio-device", "null", "--app", "maps", "--auth-file", "FOLDER/auth.json",
            "--journal", "FOLDER/journal.sqlite",
        ])
        #expect(maps.contains { $0.contains("/libsqlite3.so") })
        #expect(maps.contains { $0.contains("/libFoundationEssentials.so") }, "the maps were read whole")
        let found = Self.foundation.filter { name in maps.contains { $0.hasSuffix("/" + name) || $0.contains("/" + name + ".") } }
        #expect(found.isEmpty, "keepalive run --journal mapped \(found)")
    }

    /// The files mapped by `keepalive ARGUMENTS` (FIFO and FOLDER replaced), read once the
    /// command has opened the FIFO, that is once it started and is waiting for its input.
    static func maps(of arguments: [String]) async throws -> Set<String> {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = "\(folder)/input.nmea"
        guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        _ = try await run(try Tools.keepalive.path, ["auth", "set", "always", "--app", "maps", "--auth-file", "\(folder)/auth.json"])
        try Data(#"{"home": {"type": "circle", "latitude": 52, "longitude": 5, "radius": 100}}"#.utf8)
            .write(to: URL(fileURLWithPath: "\(folder)/conditions.json"))

        let process = Process()
        process.executableURL = try Tools.keepalive
        process.arguments = arguments.map {
            $0.replacingOccurrences(of: "FIFO", with: fifo).replacingOccurrences(of: "FOLDER", with: folder)
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed, not awaited (a `defer` cannot; never `waitUntilExit()` in a test: ProcessEnd.swift).
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // The writer's open succeeds once the command has opened the FIFO to read.
        var writer: Int32 = -1
        let opened = try await holds(within: .seconds(60)) {
            writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if writer >= 0 { return true }
            guard process.isRunning else {
                throw CommandEnded("keepalive \(arguments.joined(separator: " ")) ended (status \(process.terminationStatus)) before it read its input")
            }
            return false
        }
        guard opened else { throw CommandEnded("keepalive never opened its input") }
        defer { close(writer) }
        // Read to the end (String(contentsOfFile:) stops at the first page of a /proc file).
        guard let file = FileHandle(forReadingAtPath: "/proc/\(process.processIdentifier)/maps") else {
            throw CommandEnded("cannot read the maps of process \(process.processIdentifier)")
        }
        defer { try? file.close() }
        let text = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)  // blocking-ok: a /proc file, read from the kernel's memory
        // "address perms offset dev inode   /path": the path is the rest of the line from its first slash.
        return Set(text.split(separator: "\n").compactMap { line in line.firstIndex(of: "/").map { String(line[$0...]) } })
    }

    /// The objects the dynamic loader maps for `keepalive ARGUMENTS`, as it says them with
    /// `LD_DEBUG=files`, executable and `exec` included, to the end of the command.
    static func loaded(by arguments: [String]) async throws -> Set<String> {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = Process()
        process.executableURL = try Tools.keepalive
        process.arguments = arguments.map { $0.replacingOccurrences(of: "FOLDER", with: folder) }
        process.environment = ProcessInfo.processInfo.environment.merging(["LD_DEBUG": "files"]) { $1 }
        // What the loader says goes to a file, read once the command has ended: neither a blocking
        // read nor `waitUntilExit()` holds one of the threads tasks share (ProcessEnd.swift).
        let errors = "\(folder)/loader.txt"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        guard await process.ended(within: Tools.patience) else {
            kill(process.processIdentifier, SIGKILL)
            throw CommandEnded("keepalive \(arguments.joined(separator: " ")) did not end within \(Tools.patience)")
        }
        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "keepalive \(arguments.joined(separator: " ")): \(text.suffix(300))")
        // "file=libFoundation.so [0];  needed by ..." and "calling init: /path/to/object"
        var objects: Set<String> = [try Tools.keepalive.path]
        for line in text.split(separator: "\n") {
            if let range = line.range(of: "file=") {
                objects.insert("/" + line[range.upperBound...].prefix { $0 != " " && $0 != "[" })
            } else if let range = line.range(of: "calling init: ") {
                objects.insert(String(line[range.upperBound...]))
            }
        }
        #expect(objects.contains { $0.hasSuffix("/libswiftCore.so") }, "the loader said what it mapped: \(text.prefix(300))")
        return objects
    }

    /// A new empty folder for one command's files.
    static func makeFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("maps-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    struct CommandEnded: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
