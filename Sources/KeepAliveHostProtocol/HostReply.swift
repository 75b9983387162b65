public import KeepAliveCore

/// The host's answer to one request.
public struct HostReply: Codable, Sendable, Hashable {
    /// The request's `id`.
    public var id: Int?
    /// Whether the request was done.
    public var ok: Bool
    /// Why not, in words.
    public var error: String?
    /// `hello`: the rules the app runs under.
    public var profile: ExecutionProfile?
    /// `hello`: the app's state now.
    public var state: String?
    /// `hello`: the background modes the app was launched with.
    public var modes: [String]?
    /// `begin-task`: background time left, seconds (`nil`: unbounded).
    public var remaining: Double?
    /// `begin-task`: false when the task was refused (the app is not running).
    public var granted: Bool?
    /// `launch`: the app's first process.
    public var pid: Int32?
    /// `schedule`: seconds from now the task may begin at the soonest, when the app's wake
    /// budget put it later than asked (``WakeBudget``).
    public var begins: Double?
    /// `status`.
    public var apps: [HostAppStatus]?
    /// `status`: the device's sleep, when the host follows it: `held awake for APP: WHY`
    /// (each app the rules let run, with its rule), `not held awake`, each with the way it is
    /// followed (`(through logind)`), or why it is not followed.
    public var device: String?
    /// `monitor`, `unmonitor`: the identifiers of the app's conditions now.
    public var identifiers: [String]?

    /// A reply to request `id`.
    public init(id: Int?, ok: Bool = true, error: String? = nil) {
        self.id = id
        self.ok = ok
        self.error = error
    }
}

/// One app as `keepalive host status` shows it.
public struct HostAppStatus: Codable, Sendable, Hashable {
    /// The application identifier.
    public var app: String
    /// `active`, `inactive`, `background`, `suspended`, `not running`.
    public var state: String
    /// Whether its processes are frozen now, as the kernel says (`cgroup.events`, `freezer.state`,
    /// or every process stopped): never only because the host asked.
    public var frozen: Bool
    /// When it entered this state (ISO 8601, UTC).
    public var since: String
    /// What keeps it alive now, each with how: a background task and its time left, audio
    /// (observed or reported), location with always, a scheduled task, or the policy's grace.
    public var alive: [String]
    /// Why it was suspended or killed, when it was.
    public var reason: String?
    /// Its first process, while it runs.
    public var pid: Int32?
    /// Its location authorization now.
    public var authorization: String
    /// CPU time the app's processes have used, seconds (the cgroup's own count with cgroup v2).
    public var cpu: Double
    /// The user its processes run as.
    public var user: String?
    /// Its processes found outside its group, each with its pid and where it went (it was killed for them).
    public var escaped: [String]?
    /// How many conditions the host watches for it (`nil`: it never asked).
    public var conditions: Int?
    /// Its wake budgets now: `data 0 of 1, events 10 of 10` (see ``WakeBudget``).
    public var wakes: String?
    /// Wakes its budgets put off, each with when it comes.
    public var waiting: [String]?

    /// A status with every field (the host's).
    package init(
        app: String, state: String, frozen: Bool, since: String, alive: [String], reason: String?, pid: Int32?,
        authorization: String, cpu: Double, user: String?, escaped: [String]?, conditions: Int?, wakes: String?,
        waiting: [String]?
    ) {
        (self.app, self.state, self.frozen, self.since, self.alive, self.reason) = (app, state, frozen, since, alive, reason)
        (self.pid, self.authorization, self.cpu, self.user, self.escaped) = (pid, authorization, cpu, user, escaped)
        (self.conditions, self.wakes, self.waiting) = (conditions, wakes, waiting)
    }
}
