/// Something the embedding program asks of a running application, from any task.
public enum ApplicationCommand: Sendable, Hashable {
    /// The user left the app (SIGUSR1 for `keepalive run`).
    case enterBackground
    /// The user came back (SIGUSR2).
    case enterForeground
    /// Stop the app.
    case terminate
    /// The location authorization changed.
    case setAuthorization(LocationAuthorization)
    /// The host is about to freeze the process: the model is suspended (timers stop).
    case suspendedByHost
    /// The host thawed the process: the model resumes, each overdue timer firing once.
    case resumedByHost
    /// The host says a submitted request runs now.
    case runScheduledTask(String)
    /// The host says a running scheduled task's time is nearly up.
    case scheduledTaskExpiring(String)
    /// A location event (a region, a significant change, a visit) woke the app: it runs in the
    /// background for the profile's event budget (``Application/wakeForLocationEvent()``).
    case wakeForLocationEvent
    /// Location activity from outside the strategy begins (a fix a server asked for): the app
    /// counts as using location, and is kept alive as location keeps it, until
    /// ``endLocationActivity``. If the model refuses it (not authorized, no location mode in the
    /// background), the request goes on unprotected.
    case beginLocationActivity
    /// Location activity begun by ``beginLocationActivity`` ended.
    case endLocationActivity
    /// A device finished something; handed to the run loop's `deliver` in its isolation.
    case deliver(DeviceCompletion)
    /// Changes nothing: one more turn of the loop, which shows it still turns (systemd's
    /// watchdog pings only after the loop took one).
    case heartbeat
}

/// What a real device reports back to the application's run loop.
public enum DeviceCompletion: Sendable, Hashable {
    /// A silent pulse ended (`error` when it failed).
    case audioPulse(id: Int, error: String?)
    /// A one-shot location request ended.
    case locationRequest(id: Int, result: Result<Location, LocationError>)
}

/// Drives an ``Application`` on a clock: the real ``DispatchClock`` in the service, a test
/// clock in tests. The same model the simulator advances in virtual time.
public struct ApplicationRunLoop<C: Clock>: Sendable where C.Duration == Duration {
    /// The clock it runs on.
    public let clock: C

    /// A run loop on `clock`.
    public init(clock: C) { self.clock = clock }

    /// Runs the application's timers and policy on the clock, applying `commands` as they come,
    /// until the commands end or the task is cancelled. Runs in the caller's isolation, which
    /// owns the application.
    ///
    /// - Parameters:
    ///   - app: the application model, owned by the caller's isolation.
    ///   - commands: lifecycle changes, authorization, host notices and device completions.
    ///   - deliver: hands a device's completion (a pulse played, a fix) to the caller.
    ///   - afterEachStep: called after every wake-up (a due event or a command), to drain
    ///     work the caller keeps beside the application.
    public nonisolated(nonsending) func run(
        _ app: Application,
        commands: AsyncStream<ApplicationCommand>,
        deliver: (DeviceCompletion) -> Void = { _ in },
        afterEachStep: () -> Void = {}
    ) async {
        let start = clock.now
        let origin = app.now
        let (wakes, wake) = AsyncStream.makeStream(of: RunLoopWake.self)
        let forwarder = Task {
            for await command in commands { wake.yield(.command(command)) }
            wake.yield(.commandsEnded)
        }
        var sleeper: Task<Void, Never>?
        func arm() {
            sleeper?.cancel()
            guard let next = app.nextEventTime else {
                sleeper = nil
                return
            }
            let deadline = start.advanced(by: next - origin)
            guard deadline > clock.now else {
                sleeper = nil
                wake.yield(.due)  // already due: no sleep to miss
                return
            }
            sleeper = Task { [clock] in
                do {
                    try await clock.sleep(until: deadline, tolerance: nil)
                    wake.yield(.due)
                } catch {}
            }
        }
        func catchUp() { app.advance(to: origin + start.duration(to: clock.now)) }

        catchUp()
        arm()
        var outsideActivities = 0  // begun by commands and taken by the model
        var waitingActivities = 0  // begun by commands while suspended: taken at the resume
        func beginOutsideActivity() {
            if (try? app.beginLocationActivity()) != nil { outsideActivities += 1 }
        }
        await withTaskCancellationHandler {
            loop: for await event in wakes {
                catchUp()
                switch event {
                case .due: break
                case .commandsEnded: break loop
                case .command(let command):
                    switch command {
                    case .enterBackground: app.enterBackground()
                    case .enterForeground: app.enterForeground()
                    case .terminate: app.terminate()
                    case .setAuthorization(let status): app.authorization = status
                    case .suspendedByHost: app.suspendByHost()
                    case .resumedByHost:
                        app.resumeByHost()
                        // A command read as the process was thawed may come before the resume.
                        for _ in 0..<waitingActivities { beginOutsideActivity() }
                        waitingActivities = 0
                    case .runScheduledTask(let identifier): app.runScheduledTask(identifier: identifier)
                    case .scheduledTaskExpiring(let identifier): app.expireScheduledTask(identifier: identifier)
                    case .wakeForLocationEvent: app.wakeForLocationEvent()
                    case .beginLocationActivity:
                        if app.state == .suspended { waitingActivities += 1 } else { beginOutsideActivity() }
                    case .endLocationActivity:
                        if waitingActivities > 0 {
                            waitingActivities -= 1
                        } else if outsideActivities > 0 {
                            outsideActivities -= 1
                            app.endLocationActivity()
                        }
                    case .deliver(let completion): deliver(completion)
                    case .heartbeat: break
                    }
                    app.advance(to: app.now)  // the next turn, at once
                }
                afterEachStep()
                arm()
            }
        } onCancel: {
            wake.finish()
        }
        sleeper?.cancel()
        forwarder.cancel()
    }
}

/// Why the run loop woke up.
enum RunLoopWake: Sendable {
    case due
    case command(ApplicationCommand)
    case commandsEnded
}
