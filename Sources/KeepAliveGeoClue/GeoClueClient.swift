import FoundationEssentials
import KeepAliveCore

/// One client object (`/org/freedesktop/GeoClue2/Client/N`): who owns it, what it asked for,
/// and the locations it was given. Lives on the bus thread.
final class GeoClueClient {
    /// The path every client object is under.
    static let prefix = "/org/freedesktop/GeoClue2/Client"

    let number: Int
    /// The unique bus name of the connection that made it: the only one that may use it.
    let owner: String
    let uid: UInt32
    let pid: Int32
    /// The host's app whose group holds the owner's process, if any: then that is the app,
    /// whatever `DesktopId` says.
    let hostedApp: String?

    var desktopID = ""
    var distanceThreshold: UInt32 = 0
    var timeThreshold: UInt32 = 0
    var requested = GeoClueAccuracy.none
    var isActive = false
    /// A `Start` waits for the agent's answer.
    var isStarting = false
    /// The level granted at `Start`: the stricter of what was asked, the store and the agent.
    var granted = GeoClueAccuracy.exact
    private var locationNumber = 0
    /// The location object given last, and the one before (its `old`), which stays readable.
    private(set) var current: (path: String, location: Location, level: GeoClueAccuracy)?
    private(set) var previous: (path: String, location: Location, level: GeoClueAccuracy)?

    init(number: Int, owner: String, uid: UInt32, pid: Int32, hostedApp: String?) {
        self.number = number
        self.owner = owner
        self.uid = uid
        self.pid = pid
        self.hostedApp = hostedApp
    }

    var path: String { "\(Self.prefix)/\(number)" }

    /// The app the authorization store is asked about.
    var app: String { hostedApp ?? desktopID }

    /// The location at `path`, and its level, if it is one of this client's two.
    func location(at path: String) -> (location: Location, level: GeoClueAccuracy)? {
        if let current, current.path == path { return (current.location, current.level) }
        if let previous, previous.path == path { return (previous.location, previous.level) }
        return nil
    }

    /// Whether `location` is to be signalled, by the thresholds: as GeoClue, it is not when
    /// it is nearer than `DistanceThreshold` metres or sooner than `TimeThreshold` seconds
    /// after the last one given (0: no threshold).
    func passesThresholds(_ location: Location) -> Bool {
        guard let last = current?.location else { return true }
        if distanceThreshold > 0, location.distance(from: last) < Double(distanceThreshold) { return false }
        if timeThreshold > 0, let now = location.timestamp, let then = last.timestamp,
            abs(now.timeIntervalSince(then)) < Double(timeThreshold)
        {
            return false
        }
        return true
    }

    /// Makes `location` the current one; returns the old path ("/" for none), the new path,
    /// and the path no longer served.
    func give(_ location: Location, level: GeoClueAccuracy) -> (old: String, new: String, dropped: String?) {
        locationNumber += 1
        let path = "\(self.path)/Location/\(locationNumber)"
        let dropped = previous?.path
        previous = current
        current = (path, location, level)
        return (previous?.path ?? "/", path, dropped)
    }

    /// The paths of its locations, for removal with the client.
    var locationPaths: [String] { [current?.path, previous?.path].compactMap { $0 } }
}
