import Glibc
import KeepAliveCore
import Logging
import KeepAliveHostProtocol

extension AppHost {
    /// What a host that died left behind: every process it had stopped with signals continued
    /// (never left frozen), and each group it left with processes in it taken back, thawed, as
    /// an app in the foreground (what it was doing is not known); empty groups removed.
    static func adoptLeftovers(
        _ configuration: Configuration,
        freezer: Freezer,
        logger: Logger,
        emit: (Event) -> Void
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
}
