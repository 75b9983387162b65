import ArgumentParser
import FoundationEssentials
import KeepAliveCore
import KeepAliveHost
import KeepAliveHostProtocol

extension KeepAlive.HostCommand {
    struct Launch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start an app under the host, in the foreground (its children belong to it too).",
            discussion: "The app sees KEEPALIVE_HOST_SOCKET and KEEPALIVE_APP; `keepalive run --host` uses them."
        )

        @OptionGroup var socket: SocketOption
        @Option(help: "The app's id: letters, digits, '.', '_' or '-'.") var app: String
        @Option(help: ArgumentHelp("Declared background modes.", valueName: "list")) var modes: Parsed<BackgroundModes> = "none"
        @Option(help: ArgumentHelp("Append the app's output to this file (opened as the app's user).", valueName: "path"))
        var output: String?
        @Option(
            help: ArgumentHelp(
                "The user the app runs as: needed when root asks (apps never run as root), else only yourself.",
                valueName: "name"
            )
        )
        var user: String?
        @Option(
            name: .customLong("env"),
            help: ArgumentHelp(
                "A variable for the app, NAME=VALUE (repeatable): apps get only PATH, LANG, TZ, HOME, USER, LOGNAME, the KEEPALIVE_ ones and these.",
                valueName: "name=value"
            )
        )
        var environment: [String] = []
        @Flag(help: "Start it in the background.") var background = false
        @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.") var command: [String] = []

        func validate() throws {
            if command.isEmpty {
                throw ValidationError("give the app's command after --, e.g. -- keepalive run --host")
            }
            _ = try variables()
        }

        /// `--env` as the request carries it.
        func variables() throws -> [String: String] {
            var variables: [String: String] = [:]
            for entry in environment {
                guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                    throw ValidationError("--env takes NAME=VALUE, not '\(entry)'")
                }
                variables[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
            }
            return variables
        }

        func run() async throws {
            let launch = HostCommand.LaunchRequest(
                app: app,
                modes: modes.value,
                command: command,
                environment: try variables(),
                output: output.map { URL(fileURLWithPath: $0).path },
                user: user,
                inBackground: background
            )
            let reply = try await HostControl.send(.launch(launch), socket: socket.socket)
            print("\(app): launched, pid \(reply.pid ?? 0), \(reply.state ?? "")")
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Each app: its state, whether frozen, and why it is alive."
        )

        @OptionGroup var socket: SocketOption
        @Option(help: "Only this app.") var app: String?
        @Flag(help: "One JSON object per app, a line each.") var json = false

        func run() async throws {
            let reply = try await HostControl.send(.status(app: app), socket: socket.socket)
            if !json, let device = reply.device { print("device: \(device)") }
            for status in reply.apps ?? [] {
                if json {
                    Console.out(HostProtocol.encode(status))
                } else {
                    var line =
                        "\(status.app)  \(status.state)\(status.frozen ? " (frozen)" : "")  since \(status.since)"
                    if let pid = status.pid { line += "  pid \(pid)" }
                    if let user = status.user { line += "  user \(user)" }
                    line += "  authorization \(status.authorization)"
                    if let conditions = status.conditions { line += "  conditions \(conditions)" }
                    if !status.alive.isEmpty { line += "\n  alive: " + status.alive.joined(separator: "; ") }
                    if let reason = status.reason { line += "\n  reason: \(reason)" }
                    for escape in status.escaped ?? [] { line += "\n  escaped: \(escape)" }
                    if let wakes = status.wakes { line += "\n  wakes left: \(wakes)" }
                    for waiting in status.waiting ?? [] { line += "\n  waiting: \(waiting)" }
                    print(line)
                }
            }
            if !json, reply.apps?.isEmpty ?? true { print("no apps") }
        }
    }

    struct Foreground: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bring an app to the foreground (thawed at once).")
        @OptionGroup var socket: SocketOption
        @Option(help: "The app.") var app: String
        func run() async throws { try await HostControl.move(.foreground, app: app, socket: socket.socket) }
    }

    struct Background: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send an app to the background: its budget starts.")
        @OptionGroup var socket: SocketOption
        @Option(help: "The app.") var app: String
        func run() async throws { try await HostControl.move(.background, app: app, socket: socket.socket) }
    }

    struct Terminate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop an app: SIGTERM, then SIGKILL after 2 s.")
        @OptionGroup var socket: SocketOption
        @Option(help: "The app.") var app: String
        func run() async throws { try await HostControl.move(.terminate, app: app, socket: socket.socket) }
    }
}

/// One request to the host, its refusal as a clear error (exit 1).
enum HostControl {
    static func send(_ command: HostCommand, socket: String) async throws -> HostReply {
        do {
            let client = try HostClient(socket: URL(fileURLWithPath: socket))
            defer { client.close() }
            return try await client.send(command.request)
        } catch {
            Console.error("keepalive host: \(error)\n")
            throw ExitCode(1)
        }
    }

    static func move(_ move: HostCommand.Move, app: String, socket: String) async throws {
        let reply = try await send(.move(move, app: app), socket: socket)
        print("\(app): \(reply.state ?? "")")
    }
}
