import CSDBus
import Glibc
import KeepAliveBus
import KeepAliveCore

/// systemd-logind on the system bus: inhibitor locks, the `PrepareForSleep` signal and the
/// state of the user's session. Served by sd-bus on a thread of its own (a `BusThread`);
/// every call is handed to it.
public final class Logind: Sendable {
    /// What logind says.
    public enum Signal: Sendable, Equatable {
        /// `PrepareForSleep`: `true` before a sleep, `false` after the resume.
        case prepareForSleep(Bool)
        /// The user's session on seat0 changed (read again after any change of logind's).
        case session(SessionState)
        /// logind started again (a restart of systemd-logind): its name has a new owner.
        case restarted
        /// The connection to the bus ended, and why.
        case lost(String)
    }

    private let thread: BusThread
    /// The calls waiting for the bus thread; `nil` once it has ended (a call then fails at once).
    private let jobs = Locked<[@Sendable (LogindConnection) -> Void]?>([])

    /// Connects to the system bus and follows logind's signals; `signals` is called on the bus
    /// thread, first with the session's state as it is now.
    /// - Throws: ``SleepError`` when libsystemd or the bus is missing.
    public init(signals: @escaping @Sendable (Signal) -> Void) throws(SleepError) {
        do throws(BusFailure) {
            thread = try BusThread()
            let connection = try LogindConnection(bus: try SDBus(), signals: signals)
            let jobs = jobs
            try thread.start(
                connection.bus,
                drain: { for job in jobs.withLock({ all in defer { all = [] }; return all ?? [] }) { job(connection) } },
                ended: { failure in
                    // The calls still waiting are answered (the bus refuses them now), none later.
                    for job in jobs.withLock({ all in defer { all = nil }; return all ?? [] }) { job(connection) }
                    connection.close()
                    if let failure { signals(.lost(failure.description)) }
                }
            )
        } catch {
            throw .setup("\(error) (logind's locks and signals need the system bus)")
        }
    }

    /// Takes an inhibitor lock on sleep: logind lists `who` and `why` in `systemd-inhibit --list`.
    public func inhibit(_ mode: InhibitorLock.Mode, who: String, why: String) async throws(SleepError) -> InhibitorLock {
        let result: Result<Int32, SleepError> = await withCheckedContinuation { continuation in
            let queued = perform { connection in continuation.resume(returning: connection.inhibit(mode, who: who, why: why)) }
            if !queued { continuation.resume(returning: .failure(.failed("logind's connection has ended"))) }
        }
        return InhibitorLock(descriptor: try result.get(), mode: mode, why: why)
    }

    /// What a back-to-sleep came to.
    public enum SuspendAnswer: Sendable, Equatable {
        /// logind was asked to suspend, and took the request.
        case asked
        /// Others hold the device awake (logind's block locks' `who`, wakelocks' names): not asked.
        case heldByAnother([String])
        /// Not asked, or refused by logind, and why.
        case refused(String)
    }

    /// Asks logind to suspend the device now, unless it was used since `since` (on the monotonic
    /// clock, ``BootClock/monotonic()``) or another process holds it awake, whatever its user: a
    /// block lock on sleep in logind's list that is not this process's, a wakelock in the
    /// kernel's list under `wakelockDirectory` that is not `ownWakelock` (``SleepHolders``).
    /// Suspending needs polkit's `org.freedesktop.login1.suspend` (root has it; the packaged
    /// service's user is given it by the package's polkit rule; another user's service may be
    /// refused, and the device then sleeps at logind's idle action).
    public func suspendIfIdle(since: Duration, ownWakelock: String? = nil, wakelockDirectory: String = "/sys/power") async -> SuspendAnswer {
        await withCheckedContinuation { continuation in
            let queued = perform { connection in
                continuation.resume(returning: connection.suspendIfIdle(since: since, ownWakelock: ownWakelock, wakelockDirectory: wakelockDirectory))
            }
            if !queued { continuation.resume(returning: .refused("logind's connection has ended")) }
        }
    }

    /// How long logind lets a sleep wait for the delay locks (`InhibitDelayMaxUSec`, 5 s by
    /// default) as it says it now (a restart of logind's may change it); `nil` if it does not say.
    public func currentInhibitDelayMax() async -> Duration? {
        await withCheckedContinuation { continuation in
            let queued = perform { connection in continuation.resume(returning: connection.currentInhibitDelayMax()) }
            if !queued { continuation.resume(returning: nil) }
        }
    }

    /// Stops following logind; locks already taken stay held until released.
    public func stop() { thread.stop() }

    /// Hands `job` to the bus thread; `false` if it has ended.
    private func perform(_ job: @escaping @Sendable (LogindConnection) -> Void) -> Bool {
        let queued = jobs.withLock { jobs in
            guard jobs != nil else { return false }
            jobs?.append(job)
            return true
        }
        if queued { thread.poke() }
        return queued
    }
}

/// A held inhibitor lock: logind holds off the sleep (`block`) or delays it (`delay`) for as
/// long as the descriptor is open, and drops the lock when it closes, a crash's included.
public final class InhibitorLock: Sendable {
    /// How the lock holds the sleep.
    public enum Mode: String, Sendable {
        /// No sleep but one a privileged user asks for.
        case block
        /// A sleep waits until the lock is released, at most logind's `InhibitDelayMaxSec`.
        case delay
    }

    /// Its mode.
    public let mode: Mode
    /// Why it was taken.
    public let why: String
    private let descriptor: Locked<Int32>

    init(descriptor: Int32, mode: Mode, why: String) {
        self.descriptor = Locked(descriptor)
        self.mode = mode
        self.why = why
    }

    deinit { release() }

    /// Releases the lock (once; later calls do nothing).
    public func release() {
        let descriptor = descriptor.withLock { value in defer { value = -1 }; return value }
        if descriptor >= 0 { close(descriptor) }
    }
}
