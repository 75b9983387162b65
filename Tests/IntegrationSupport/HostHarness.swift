package import Foundation
package import LocationKeepAlive
import LocationKeepAliveMocks
import Testing
import TestWaiting

/// A real host in the test process (its own cgroup folder and socket) with real app
/// processes, every event kept with the time it happened.
///
/// Its apps run as root unless a test names a user (the host is told to allow it): the
/// scenarios test the policy on services that read the harness's root-owned files;
/// `ContainmentTests` runs apps as `nobody`.
package final class HostHarness: Sendable {
    package let host: AppHost
    package let directory: URL
    private let events = Locked<[(at: ContinuousClock.Instant, event: AppHost.Event)]>([])
    private let runner: Task<Void, Never>
    private let control: HostClient
    /// What the host reads as power and network (scheduled work's conditions).
    package let conditions = Locked(SystemConditions())
    private let freezer: FreezerKind
    private let isStopped = Locked(false)

    package var socket: String { host.configuration.socket.path }

    package init(
        freezer: FreezerKind,
        profile: ExecutionProfile,
        noticeTimeout: Duration = .milliseconds(500),
        adjust: (inout AppHost.Configuration) -> Void = { $0.allowsRootApps = true }
    ) async throws {
        self.freezer = freezer
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("host-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = AppHost.Configuration(socket: directory.appendingPathComponent("host.sock"))
        configuration.freezer = freezer
        configuration.profile = profile
        configuration.name = "keepalive.test-\(UUID().uuidString.prefix(8))"
        configuration.noticeTimeout = noticeTimeout
        let authorization = directory.appendingPathComponent("auth")
        configuration.authorizationFile = { AuthorizationFile(url: authorization.appendingPathComponent("\($0).json")) }
        let conditions = self.conditions
        configuration.conditions = { conditions.withLock { $0 } }
        configuration.monitorFolder = directory.appendingPathComponent("monitors")
        adjust(&configuration)
        let events = self.events
        let host = try AppHost(configuration: configuration) { event in
            events.withLock { $0.append((ContinuousClock.now, event)) }
        }
        self.host = host
        runner = Task { await host.run() }
        control = try HostClient(socket: configuration.socket)
    }

    /// The authorization file the host reads for `app` (and the app is given).
    package func authorizationFile(for app: String) -> String {
        directory.appendingPathComponent("auth/\(app).json").path
    }

    package func authorize(_ app: String, _ status: LocationAuthorization) throws {
        try LocationAuthorizationManager(
            application: app,
            file: AuthorizationFile(url: URL(fileURLWithPath: authorizationFile(for: app)))
        ).setStatus(status)
    }

    @discardableResult
    package func launch(
        _ app: String,
        modes: [String] = [],
        output: String? = nil,
        user: String? = "root",
        _ command: [String]
    ) async throws -> Int32 {
        var request = HostRequest(.launch, app: app)
        request.user = user
        request.modes = modes
        request.command = command
        request.output = output
        return try await control.send(request).pid ?? 0
    }

    /// `background` or `foreground`; returns when the host has done it.
    package func move(_ operation: HostRequest.Operation, _ app: String) async throws {
        try await control.send(HostRequest(operation, app: app))
    }

    package func status(_ app: String) async throws -> HostAppStatus {
        var request = HostRequest(.status, app: app)
        request.app = app
        guard let status = try await control.send(request).apps?.first else {
            throw ToolMissing("no status for \(app)")
        }
        return status
    }

    package var all: [(at: ContinuousClock.Instant, event: AppHost.Event)] { events.withLock { $0 } }

    /// Every event so far, a line each with its time from `origin`, for a failure's message.
    package func eventLog(from origin: ContinuousClock.Instant) -> String {
        all.map { "\n  \(origin.duration(to: $0.at)) \($0.event)" }.joined()
    }

    /// The first event after `start` that matches, waiting up to `timeout`; `nil` if none came,
    /// and then the host's events from `start` are printed, for whichever check fails on it.
    package func firstEvent(
        after start: ContinuousClock.Instant,
        within timeout: Duration,
        fileID: String = #fileID,
        line: Int = #line,
        _ matches: @escaping @Sendable (AppHost.Event) -> Bool
    ) async -> (at: ContinuousClock.Instant, event: AppHost.Event)? {
        let first: @Sendable () -> (at: ContinuousClock.Instant, event: AppHost.Event)? = { [self] in all.first(where: { $0.at >= start && matches($0.event) }) }
        guard (try? await holds(within: timeout) { first() != nil }) == true else {
            print("\(fileID):\(line): no such event of the host within \(timeout); its events from then:\(eventLog(from: start))")
            return nil
        }
        return first()
    }

    package func stop() async {
        isStopped.withLock { $0 = true }
        control.close()
        await host.shutDown()
        await runner.value
        try? FileManager.default.removeItem(at: directory)
    }

    /// A test that failed before ``stop()`` (a `#require`, a throw): its apps are killed now,
    /// not left frozen holding the test process's output, and the host is told to shut down.
    deinit {
        guard !isStopped.withLock({ $0 }) else { return }
        control.close()
        let (host, runner) = (host, runner)
        Leftovers.kill(Leftovers.processes(withEnvironment: "KEEPALIVE_HOST_SOCKET=\(host.configuration.appSocket.path)"))
        if freezer != .signal, let cgroups = try? Freezer.choose(freezer, name: host.configuration.name) {
            Leftovers.removeGroups(of: cgroups)
        }
        try? FileManager.default.removeItem(at: directory)
        Task {
            await host.shutDown()
            await runner.value
        }
    }
}

extension AppHost.Event {
    package var frozenApp: String? { if case .frozen(let app, _, _) = self { app } else { nil } }
    package var thawedApp: String? { if case .thawed(let app, _) = self { app } else { nil } }
    package var killedApp: String? { if case .killed(let app, _) = self { app } else { nil } }
    package var latency: Duration? {
        switch self {
        case .frozen(_, let latency, _), .thawed(_, let latency): latency
        default: nil
        }
    }
}

/// A raw protocol client as an app's command: sends each request (JSON, `$APP` standing for
/// its own app id, ids added) and writes each reply line to `answers`.
package func rawProtocolApp(sending requests: [String], answersTo answers: String) -> [String] {
    let script = """
        import json, os, socket, sys
        s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
        f = s.makefile("rw")
        out = open(sys.argv[1], "w")
        for i, text in enumerate(sys.argv[2:]):
            o = json.loads(text.replace("$APP", os.environ["KEEPALIVE_APP"]))
            o["id"] = i + 1
            f.write(json.dumps(o) + "\\n"); f.flush()
            out.write(f.readline()); out.flush()
        """
    return ["/usr/bin/python3", "-c", script, answers] + requests
}

/// The reply lines a ``rawProtocolApp(sending:answersTo:)`` wrote, once there are `count`.
package func answers(in path: String, count: Int) async throws -> [Substring] {
    try await waitUntil(timeout: .seconds(10)) {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count == count
    }
    return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
}
