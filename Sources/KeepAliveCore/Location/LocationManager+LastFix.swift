import FoundationEssentials

/// Answers that never power the receiver: the last fix, its accuracy grown honestly with the
/// time since. Linux has no cell or Wi-Fi location in this stack (GeoClue's Wi-Fi source needs
/// a network service we do not call): a coarse answer is the GNSS's last fix, or none.
extension LocationManager {
    /// A request asking for this accuracy (metres) or coarser is answered from the last fix when
    /// it is good enough: CoreLocation's `kCLLocationAccuracyKilometer` (and its three kilometres).
    public static let coarseAccuracy: Double = 1_000

    /// How fast the device is taken to have gone since the last fix when the fix's own speed was
    /// lower (metres per second): a walk. A vehicle's tracker moving faster reports its speed.
    public static let assumedSpeed: Double = 1.5

    /// The error taken for a fix whose receiver gave none (metres).
    static let unknownError: Double = 50

    /// The last fix, kept through a loss and a suspension, with its accuracy grown by how far
    /// the device may have gone since: its error plus the larger of its speed and
    /// ``assumedSpeed``, times its age (on the source's clock, as every age here). Its time is
    /// its own, so its age stays honest. `nil` before any fix, or for a fix without a time.
    public func lastFix() -> Location? {
        guard var fix = state.withLock({ $0.lastFix }), let time = fix.timestamp else { return nil }
        let age = max(0, currentDate().timeIntervalSince(time))
        let speed = max(fix.speed ?? 0, Self.assumedSpeed)
        fix.horizontalAccuracy = (fix.horizontalAccuracy ?? Self.unknownError) + speed * age
        return fix
    }

    /// The keep-alive poll of a strategy (the hybrid's tick): the last fix, grown, and never the
    /// receiver powered for it. On iOS the poll that keeps an app alive is nearly free; here a
    /// fix would keep the GNSS on, so the poll keeps the app alive with what is known.
    ///
    /// - Throws: ``LocationError/Code/locationUnknown`` before the first fix (the strategy plays
    ///   a pulse of silence instead), or what the authorization says.
    public func keepAlivePoll() throws(LocationError) -> Location {
        switch refreshAccess() {
        case .denied(let error): throw error
        case .paused(let reason): throw LocationError(.notAuthorized, reason)
        case .deliver: break
        }
        guard let fix = lastFix() else {
            throw LocationError(.locationUnknown, "no fix yet: a keep-alive poll answers from the last fix and never powers the receiver")
        }
        return fix
    }

    /// A coarse request's answer from the last fix, if it meets `filter` once grown.
    func coarseAnswer(_ filter: LocationFilter) -> Location? {
        guard let desired = filter.desiredAccuracy, desired >= Self.coarseAccuracy, let fix = lastFix() else { return nil }
        let now = currentDate()
        return filter.accepts(fix, now: { now }) ? fix : nil
    }
}
