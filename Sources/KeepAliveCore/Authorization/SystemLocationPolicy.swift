public import FoundationEssentials

/// The machine's location policy, set by its administrator: location services on or off for
/// everyone, and applications restricted (they cannot change that themselves).
///
/// Read from `/etc/location-keepalive/policy.json` by default:
/// `{"version": 1, "locationServicesEnabled": true, "restrictedApplications": ["com.example.kiosk"]}`.
/// No file means services on and nothing restricted. A damaged file turns services off (the
/// safer reading) and says why.
public struct SystemLocationPolicy: Sendable, Hashable, Codable {
    /// The file format's version.
    public var version: Int
    /// Location services on for everyone (off: every app is denied).
    public var locationServicesEnabled: Bool
    /// Applications the system forbids location to.
    public var restrictedApplications: [String]

    /// A policy: services on, nobody restricted, by default.
    public init(locationServicesEnabled: Bool = true, restrictedApplications: [String] = []) {
        self.version = 1
        self.locationServicesEnabled = locationServicesEnabled
        self.restrictedApplications = restrictedApplications
    }

    /// `/etc/location-keepalive/policy.json`.
    public static let defaultURL = URL(fileURLWithPath: "/etc/location-keepalive/policy.json")

    /// The policy in `url`; with the problem that made it fall back to services off, if any.
    public static func load(from url: URL) -> (policy: SystemLocationPolicy, problem: AuthorizationError?) {
        guard FileManager.default.fileExists(atPath: url.path) else { return (SystemLocationPolicy(), nil) }
        do {
            let policy = try JSONDecoder().decode(SystemLocationPolicy.self, from: Data(contentsOf: url))
            guard policy.version <= 1 else {
                return (
                    SystemLocationPolicy(locationServicesEnabled: false),
                    AuthorizationError(
                        .futureVersion,
                        "location policy \(url.path) has version \(policy.version), newer than this keepalive "
                            + "understands; location services are treated as off"
                    )
                )
            }
            return (policy, nil)
        } catch {
            return (
                SystemLocationPolicy(locationServicesEnabled: false),
                AuthorizationError(
                    .damagedFile,
                    "location policy \(url.path) cannot be read (\(error)); location services are treated as "
                        + "off until it is fixed"
                )
            )
        }
    }
}
