import KeepAliveCore
@testable import KeepAliveHostProtocol
import KeepAliveMonitoring
import Testing

/// The control protocol's requests, read once into typed commands: what each operation needs,
/// and the words that say what is missing.
@Suite struct HostCommandTests {
    static func command(_ line: String) throws -> HostCommand {
        try HostCommand(try HostProtocol.decodeRequest(Array(line.utf8)))
    }

    static func refusal(_ line: String) -> String? {
        do {
            _ = try command(line)
            return nil
        } catch {
            return (error as? HostError)?.message
        }
    }

    @Test func eachOperationNamesWhatItLacks() {
        #expect(Self.refusal(#"{"op": "begin-task"}"#) == "begin-task needs task (a number)")
        #expect(Self.refusal(#"{"op": "end-task"}"#) == "end-task needs task (a number)")
        #expect(Self.refusal(#"{"op": "audio"}"#) == "audio needs active (true or false)")
        #expect(Self.refusal(#"{"op": "location"}"#) == "location needs active (true or false)")
        #expect(Self.refusal(#"{"op": "ack"}"#) == "ack needs notice")
        #expect(Self.refusal(#"{"op": "schedule"}"#) == "schedule needs name")
        #expect(Self.refusal(#"{"op": "schedule", "name": "n", "kind": "nightly"}"#) == "schedule kind is refresh or processing, not nightly")
        #expect(Self.refusal(#"{"op": "launch", "app": "../x", "command": ["true"]}"#)?.hasPrefix("launch needs an app id") == true)
        #expect(Self.refusal(#"{"op": "launch", "app": "a"}"#) == "launch needs a command")
        #expect(Self.refusal(#"{"op": "launch", "app": "a", "command": ["true"], "modes": ["teleport"]}"#)?.hasPrefix("modes are audio") == true)
        #expect(Self.refusal(#"{"op": "launch", "app": "a", "command": ["true"], "environment": {"A=B": "c"}}"#) == "launch environment: 'A=B' is not a variable name or value")
    }

    @Test func aCompleteRequestIsReadWithItsDefaults() throws {
        guard case .report(.beginTask(let number, let name)) = try Self.command(#"{"op": "begin-task", "task": 3}"#) else {
            Issue.record("not a begin-task")
            return
        }
        #expect(number == 3 && name == "background task")
        guard case .report(.schedule(let schedule)) = try Self.command(#"{"op": "schedule", "name": "sync", "earliest": 60}"#) else {
            Issue.record("not a schedule")
            return
        }
        #expect(schedule.kind == .refresh && schedule.earliest == 60 && !schedule.power && !schedule.network)
        guard case .launch(let launch) = try Self.command(#"{"op": "launch", "app": "t", "command": ["/bin/true"], "modes": ["audio"], "active": false}"#) else {
            Issue.record("not a launch")
            return
        }
        #expect(launch.app == "t" && launch.modes == [.audio] && launch.inBackground && launch.environment.isEmpty)
        guard case .move(.terminate, let app) = try Self.command(#"{"op": "terminate", "app": "t"}"#) else {
            Issue.record("not a terminate")
            return
        }
        #expect(app == "t")
        guard case .report(.complete(nil, true)) = try Self.command(#"{"op": "complete"}"#) else {
            Issue.record("complete succeeds unless it says otherwise")
            return
        }
    }

    /// What the clients send is made as a command and read back the same, through the wire's
    /// JSON: every operation, with every field it carries.
    @Test(arguments: [
        HostCommand.hello(app: "tracker"),
        .report(.beginTask(number: 3, name: "upload")),
        .report(.endTask(number: 3)),
        .report(.audio(active: true)),
        .report(.location(active: false)),
        .report(.schedule(HostCommand.ScheduleRequest(name: "sync", kind: .processing, earliest: 90, power: true, network: false))),
        .report(.complete(name: "sync", success: false)),
        .report(.ack(notice: "will-suspend")),
        .monitor(
            app: "tracker",
            conditions: ["moves": .significantChange, "home": .circle(center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 150)],
            assuming: .satisfied
        ),
        .unmonitor(app: nil, identifiers: ["home", "work"]),
        .wakeOnData(sockets: [7, 9]),
        .launch(
            HostCommand.LaunchRequest(
                app: "tracker", modes: [.audio, .location], command: ["keepalive", "run", "--host"],
                environment: ["LANG": "C"], output: "/tmp/out", user: "gps", inBackground: true
            )
        ),
        .launch(HostCommand.LaunchRequest(app: "plain", modes: [], command: ["true"])),
        .move(.foreground, app: "tracker"), .move(.background, app: "tracker"), .move(.terminate, app: "tracker"),
        .status(app: nil),
    ])
    func aClientsCommandIsReadBackAsItWasMade(command: HostCommand) throws {
        let line = HostProtocol.encode(command.request)
        #expect(try HostCommand(try HostProtocol.decodeRequest(line.dropLast())) == command)
    }

    /// The apps' socket serves `hello` and what an app says of itself: the typed command
    /// decides, every case of it, so a new one cannot be left out of the decision.
    @Test func onlyAnAppsOwnCommandsAreServedOnTheAppsSocket() throws {
        let own = [
            #"{"op": "hello", "app": "t"}"#, #"{"op": "begin-task", "task": 1}"#, #"{"op": "end-task", "task": 1}"#,
            #"{"op": "audio", "active": true}"#, #"{"op": "location", "active": false}"#, #"{"op": "ack", "notice": "background"}"#,
            #"{"op": "schedule", "name": "s"}"#, #"{"op": "complete"}"#, #"{"op": "monitor"}"#, #"{"op": "unmonitor"}"#,
            #"{"op": "wake-on-data", "sockets": [3]}"#,
        ]
        let others = [
            #"{"op": "launch", "app": "t", "command": ["true"]}"#, #"{"op": "foreground", "app": "t"}"#,
            #"{"op": "background", "app": "t"}"#, #"{"op": "terminate", "app": "t"}"#, #"{"op": "status"}"#,
        ]
        for line in own { #expect(try Self.command(line).isAnAppsOwn, "\(line)") }
        for line in others { #expect(try !Self.command(line).isAnAppsOwn, "\(line)") }
        #expect(own.count + others.count == HostRequest.Operation.allCases.count)  // every operation of the wire
    }
}
