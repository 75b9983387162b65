import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol
import Logging

/// What an earlier host left, taken back as a new one starts: its apps' groups with processes
/// in them (adopted, thawed) and its apps' launch records (to launch them again for their
/// events and due work).
enum HostLeftovers {
    /// What a host that died left behind: every process it had stopped with signals continued
    /// (never left frozen), and each group it left with processes in it taken back, thawed, as
    /// an app in the foreground (what it was doing is not known); empty groups removed.
    static func adopted(
        _ configuration: AppHost.Configuration,
        freezer: Freezer,
        logger: Logger,
        emit: (AppHost.Event) -> Void
    ) -> [(app: HostedApp, model: Application)] {
        // A host that died left its apps behind: never leave one frozen, and take them back.
        for pid in (KernelFile.read(configuration.stoppedPath) ?? "").split(separator: "\n").compactMap({ Int32($0) }) {
            kill(pid, SIGCONT)
        }
        unlink(configuration.stoppedPath)
        var adopted: [(app: HostedApp, model: Application)] = []
        for group in freezer.thawLeftovers() {
            let processes = group.processes()
            guard let first = processes.first else {
                try? group.remove()
                continue
            }
            let authorization = LocationAuthorizationManager(
                application: group.app,
                file: configuration.authorizationFile(group.app),
                logger: logger
            )
            let model = Application(profile: configuration.profile, authorization: authorization.status, logger: logger)
            model.launch()  // in the foreground: what it was doing is not known
            let owner = ProcFS.owner(of: first).flatMap(AppUser.withID) ?? .current
            let app = HostedApp(id: group.app, group: group, authorization: authorization, user: owner, isAdopted: true)
            app.pid = first
            app.reason = "adopted from an earlier host: thawed, in the foreground"
            adopted.append((app, model))
            emit(.adopted(app: group.app, thawed: true))
        }
        return adopted
    }

    /// The apps of the records an earlier host left, each with its machine: adopted ones get
    /// their launch back (and `quitByUser`, those whose record says their user quit them), the
    /// others are kept as not running, to be launched for their events and due tasks.
    static func recorded(
        _ configuration: AppHost.Configuration,
        freezer: Freezer,
        adopted: [(app: HostedApp, model: Application)],
        quitByUser: inout Set<String>,
        logger: Logger,
        emit: (AppHost.Event) -> Void
    ) -> [(app: HostedApp, model: Application, machine: HostedAppMachine)] {
        guard let folder = configuration.monitorFolder else { return [] }
        let (records, failures) = AppLaunchRecord.all(in: folder)
        for failure in failures { emit(.error(failure)) }
        var found: [(app: HostedApp, model: Application, machine: HostedAppMachine)] = []
        for (id, record) in records.sorted(by: { $0.key < $1.key }) {
            guard let user = AppUser.withID(record.uid), let modes = BackgroundModes(parsing: record.modes.joined(separator: ",")) else {
                emit(.error("\(id)'s launch record names uid \(record.uid) or modes \(record.modes) this machine does not know: it is not launched"))
                continue
            }
            let spec = LaunchSpec(command: record.command, modes: modes, output: record.output, user: user, environment: record.environment)
            if let app = adopted.first(where: { $0.app.id == id })?.app {
                app.launchSpec = spec
                if record.terminated { quitByUser.insert(id) }
                continue
            }
            let authorization = LocationAuthorizationManager(application: id, file: configuration.authorizationFile(id), logger: logger)
            let model = Application(profile: configuration.profile, backgroundModes: modes, authorization: authorization.status, logger: logger)
            for request in record.taskRequests(from: Date()) { try? model.submit(request) }
            let leader = record.leader.flatMap { leader in
                freezer.kind == .signal && ProcFS.isProcess(leader, startedAt: record.leaderStart) && ProcFS.state(of: leader) != "Z"
                    ? leader : nil
            }
            let machine = HostedAppMachine(
                adopted: leader != nil,
                quitByUser: record.terminated,
                dataWakes: configuration.dataWakes,
                eventWakes: configuration.eventWakes
            )
            let app = HostedApp(id: id, group: freezer.group(for: id), authorization: authorization, user: user, isAdopted: leader != nil)
            app.launchSpec = spec
            app.reason = record.terminated ? "terminated by request (before this host started)" : "not running when this host started"
            if let leader {
                app.group.leader = leader  // its session, and what the kernel sees it start from now on
                app.group.thawNow()
                kill(-leader, SIGCONT)  // stopped by the host that died, should its watchdog have missed some
                app.pid = leader
                app.reason = "adopted from an earlier host: thawed, in the foreground"
                model.launch()
                emit(.adopted(app: id, thawed: true))
            }
            found.append((app, model, machine))
        }
        return found
    }

    /// Every app an earlier host left, adopted or recorded, with its value for the host's
    /// machine: adopted ones running, each with the machine its record says (quit by its user).
    static func known(
        _ configuration: AppHost.Configuration,
        freezer: Freezer,
        adopted: [(app: HostedApp, model: Application)],
        logger: Logger,
        emit: (AppHost.Event) -> Void
    ) -> [(HostedApp, HostMachine.App)] {
        var quitByUser: Set<String> = []
        let recorded = recorded(configuration, freezer: freezer, adopted: adopted, quitByUser: &quitByUser, logger: logger, emit: emit)
        let found = adopted.map { app, model in
            let machine = HostedAppMachine(
                adopted: true, quitByUser: quitByUser.contains(app.id), dataWakes: configuration.dataWakes, eventWakes: configuration.eventWakes
            )
            return (app, model, machine)
        } + recorded
        return found.map { app, model, machine in
            (app, HostMachine.App(id: app.id, model: model, machine: machine, isRunning: app.pid != nil, isLaunchable: app.launchSpec != nil))
        }
    }
}
