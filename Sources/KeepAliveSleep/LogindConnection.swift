import CSDBus
import Glibc
import KeepAliveBus

/// logind's side of the bus thread: the calls it makes and the signals it follows. Used on the
/// bus thread alone.
final class LogindConnection {
    static let name = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"

    let bus: SDBus
    private let signals: @Sendable (Logind.Signal) -> Void
    private let handlers: UnsafeMutablePointer<csdbus_handlers>
    private var session: SessionState?
    /// logind's `InhibitDelayMaxUSec` as it says it now: how long a sleep waits for the delay
    /// locks (`nil`: it did not say).
    func currentInhibitDelayMax() -> Duration? {
        let delay = try? bus.property(Self.name, path: Self.path, interface: Self.manager, name: "InhibitDelayMaxUSec", type: "t")
        defer { delay?.release() }
        return delay?.readUInt64().map { .microseconds(Int64(clamping: $0)) }
    }

    init(bus: SDBus, signals: @escaping @Sendable (Logind.Signal) -> Void) throws(BusFailure) {
        self.bus = bus
        self.signals = signals
        guard try bus.hasOwner(Self.name) else {
            throw .setup("systemd-logind is not on the system bus (a device without logind does not sleep through it)")
        }
        handlers = .allocate(capacity: 1)
        handlers.initialize(to: csdbus_handlers())
        handlers.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        handlers.pointee.reply = { context, message in
            let connection = Unmanaged<LogindConnection>.fromOpaque(context!).takeUnretainedValue()
            connection.signalled(BusMessage(connection.bus.api, message!))
            return 0
        }
        try bus.matchSignal(sender: Self.name, path: Self.path, interface: Self.manager, member: "PrepareForSleep", handlers: handlers)
        // Any property of logind's that changes (a session locked, another in front): read the session again.
        try bus.matchSignal(sender: Self.name, path: nil, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", handlers: handlers)
        try bus.matchSignal(sender: Self.name, path: Self.path, interface: Self.manager, member: "SessionRemoved", handlers: handlers)
        try bus.matchSignal(sender: Self.name, path: Self.path, interface: Self.manager, member: "SessionNew", handlers: handlers)
        // logind restarted (its name has a new owner): its locks are taken again.
        try bus.matchSignal(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", handlers: handlers
        )
        sessionMayHaveChanged()
    }

    /// Frees the handlers; called on the bus thread as it ends.
    func close() { handlers.deallocate() }

    private func signalled(_ message: BusMessage) {
        switch message.member {
        case "PrepareForSleep":
            if let sleeping = message.readBool() { signals(.prepareForSleep(sleeping)) }
        case "NameOwnerChanged":
            // (name, old owner, new owner): a new owner of logind's name is logind started again.
            guard message.readString() == Self.name, message.readString() != nil, let owner = message.readString(), !owner.isEmpty else { return }
            signals(.restarted)
            sessionMayHaveChanged()
        default:
            sessionMayHaveChanged()
        }
    }

    private func sessionMayHaveChanged() {
        let now = readSession()
        guard now != session else { return }
        session = now
        signals(.session(now))
    }

    /// The user's session on seat0: none without a seat or a session in front; inactive when
    /// the session in front is locked or not a user's (a greeter, a lock screen's own).
    private func readSession() -> SessionState {
        guard let active = try? bus.property(Self.name, path: "\(Self.path)/seat/seat0", interface: "org.freedesktop.login1.Seat", name: "ActiveSession", type: "(so)") else {
            return .none
        }
        defer { active.release() }
        guard active.enter("r", "so"), active.readString() != nil, let path = active.readString("o"), path != "/" else { return .none }
        let sessionInterface = "org.freedesktop.login1.Session"
        guard let kind = try? bus.property(Self.name, path: path, interface: sessionInterface, name: "Class", type: "s") else { return .inactive }
        let isUser = kind.readString() == "user"
        kind.release()
        guard isUser, let locked = try? bus.property(Self.name, path: path, interface: sessionInterface, name: "LockedHint", type: "b") else {
            return .inactive
        }
        defer { locked.release() }
        return locked.readBool() == false ? .active : .inactive
    }

    /// Asks logind to suspend the device, if nobody used it since `since` on the monotonic clock
    /// (logind's `IdleHint`, and its `IdleSinceHintMonotonic` no later than then, with a
    /// second's margin for logind's own view of the resume) and nobody else holds it: no block
    /// lock on sleep of another process in logind's list, whatever its user, and no wakelock of
    /// another's in the kernel's (``SleepHolders``). Then `SuspendWithFlags` with
    /// `SD_LOGIND_ROOT_CHECK_INHIBITORS`, so that logind itself refuses for another user's lock.
    ///
    /// The race that is left: a lock of our own user taken between logind's answer to
    /// `ListInhibitors` and its handling of the suspend, two calls one after the other on this
    /// thread (a round trip of the bus: well under a millisecond on an idle device), is not seen.
    func suspendIfIdle(since: Duration, ownWakelock: String?, wakelockDirectory: String) -> Logind.SuspendAnswer {
        guard let hint = try? bus.property(Self.name, path: Self.path, interface: Self.manager, name: "IdleHint", type: "b") else {
            return .refused("logind does not say whether the device is idle")
        }
        let idle = hint.readBool() == true
        hint.release()
        guard idle else { return .refused("the device is in use (logind's IdleHint)") }
        if let idleSince = try? bus.property(Self.name, path: Self.path, interface: Self.manager, name: "IdleSinceHintMonotonic", type: "t") {
            defer { idleSince.release() }
            if let value = idleSince.readUInt64(), Duration.microseconds(Int64(clamping: value)) > since + .seconds(1) {
                return .refused("the device was used since the wake (logind's IdleSinceHint)")
            }
        }
        guard let inhibitors = listInhibitors() else { return .refused("logind did not list its locks: whether another holds the device is not known") }
        let wakelocks = KernelWakelock.held(in: wakelockDirectory)
        let others = SleepHolders.others(inhibitors: inhibitors, wakelocks: wakelocks, ownPID: UInt32(getpid()), ownWakelock: ownWakelock)
        guard others.isEmpty else { return .heldByAnother(others) }
        do throws(BusFailure) {
            let reply = try bus.call(Self.name, path: Self.path, interface: Self.manager, member: "SuspendWithFlags") { call in
                call.append(UInt64(1))  // SD_LOGIND_ROOT_CHECK_INHIBITORS
            }
            reply.release()
            return .asked
        } catch {
            return .refused("logind refused to suspend: \(error)")
        }
    }

    /// logind's inhibitor locks (`ListInhibitors`); `nil` if it does not answer.
    private func listInhibitors() -> [SleepHolders.Inhibitor]? {
        guard let reply = try? bus.call(Self.name, path: Self.path, interface: Self.manager, member: "ListInhibitors") else { return nil }
        defer { reply.release() }
        guard reply.enter("a", "(ssssuu)") else { return nil }
        var locks: [SleepHolders.Inhibitor] = []
        while reply.enter("r", "ssssuu") {
            defer { reply.exit() }
            guard let what = reply.readString(), let who = reply.readString(), let why = reply.readString(), let mode = reply.readString(),
                let uid = reply.readUInt32(), let pid = reply.readUInt32()
            else { return nil }
            locks.append(SleepHolders.Inhibitor(what: what, who: who, why: why, mode: mode, uid: uid, pid: pid))
        }
        reply.exit()
        return locks
    }

    /// `Inhibit("sleep", who, why, mode)`: the lock's descriptor.
    func inhibit(_ mode: InhibitorLock.Mode, who: String, why: String) -> Result<Int32, SleepError> {
        do throws(BusFailure) {
            let reply = try bus.call(Self.name, path: Self.path, interface: Self.manager, member: "Inhibit") { call in
                call.append("sleep")
                call.append(who)
                call.append(why)
                call.append(mode.rawValue)
            }
            defer { reply.release() }
            guard let descriptor = reply.readFileDescriptor() else { return .failure(.failed("logind's Inhibit answered no descriptor")) }
            return .success(descriptor)
        } catch {
            return .failure(.failed("logind refused a \(mode.rawValue) lock: \(error)"))
        }
    }
}
