public import FoundationEssentials

/// Who delivers a destination now: the process holding its lease in the journal (the service
/// and `keepalive upload` never deliver one destination at once).
public struct DeliveryLease: Sendable, Hashable, CustomStringConvertible {
    /// The holder, `pid@host/boot role` (such as `1234@pine/3f2a9c1e service`).
    public var owner: String
    /// When it took the lease (unknown for one taken by a version before 2026-12-06).
    public var since: Date?
    /// When the lease runs out unless its holder renews it (every third of its length).
    public var expires: Date

    /// `1234@pine/3f2a9c1e service since 2026-12-06T02:03:04Z (its lease runs to ...)`.
    public var description: String {
        let since = since.map { " since \($0.formatted(.iso8601))" } ?? ""
        return "\(owner)\(since) (its lease runs to \(expires.formatted(.iso8601)) unless renewed)"
    }
}
