import Dispatch
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol
import Logging

extension HostedApp {
    /// A new launch of app `id`, in `group`: its authorization, its model on the host's rules
    /// (the graces stretched by the report allowance), its scheduled work done by `scheduledWork`.
    static func make(
        _ id: String,
        _ spec: LaunchSpec,
        group: AppProcessGroup,
        configuration: AppHost.Configuration,
        profile: ExecutionProfile,
        logger: Logger,
        scheduledWork: @escaping (ScheduledBackgroundTask) -> Void
    ) -> (HostedApp, Application) {
        let authorization = LocationAuthorizationManager(application: id, file: configuration.authorizationFile(id), logger: logger)
        var profile = profile
        profile.audioGrace += configuration.reportAllowance
        profile.locationGrace += configuration.reportAllowance
        let model = Application(profile: profile, backgroundModes: spec.modes, authorization: authorization.status, logger: logger)
        model.conditions = configuration.conditions()
        model.defaultScheduledHandler = scheduledWork
        let app = HostedApp(id: id, group: group, authorization: authorization, user: spec.user)
        app.launchSpec = spec
        return (app, model)
    }

    /// Starts its first process in its group, as its user, launched for `reason` (`nil`: its
    /// user's) and told the apps' socket, and waits until it is in it: the spawn and the waits
    /// on the host's queue for processes, the kernel's word of its exit (`exited`, on `exits`)
    /// watched from the spawn on. One that did not get there is killed and reaped.
    func start(
        _ spec: LaunchSpec,
        reason: String?,
        hostSocket: String,
        processes: DispatchQueue,
        exits: DispatchQueue,
        isolation: isolated (any Actor)? = #isolation,
        exited: @escaping @Sendable () -> Void
    ) async throws(HostError) {
        var environment = spec.environment
        environment["KEEPALIVE_HOST_SOCKET"] = hostSocket
        environment["KEEPALIVE_APP"] = id
        environment["KEEPALIVE_LAUNCH_REASON"] = reason
        do throws(HostError) {
            let (group, environment) = (group, environment)
            let pid = try await processes.awaiting { () throws(HostError) -> Int32 in
                try group.launch(spec.command, as: spec.user, environment: environment, output: spec.output)
            }
            self.pid = pid
            exitWatch = ProcessExitWatch(pid: pid, queue: exits, onExit: exited)
            switch await group.waitUntilJoined(by: pid, within: .seconds(10)) {
            case .joined: break
            case .ended(let status):
                self.pid = nil
                throw HostError(.launchFailed, "app \(id) ended before it joined its group (\(status))")
            case .late: throw HostError(.launchFailed, "app \(id) did not join its group \(group.path ?? "") within 10 s")
            }
            try group.delegate(to: spec.user)
        } catch {
            if let pid {  // started, but not as it must run: it does not run at all
                await group.signalEverything(leader: pid, SIGKILL, on: processes)
                _ = await processes.awaiting { ExitStatus.reap(pid, waiting: true) }
            }
            throw error
        }
    }
}
