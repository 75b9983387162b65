import Glibc
public import KeepAliveHostProtocol

/// Who an app runs as: a user's ids and supplementary groups, from the user database.
public struct AppUser: Sendable, Hashable, CustomStringConvertible {
    /// The login name.
    public var name: String
    /// The user id.
    public var uid: UInt32
    /// The primary group id.
    public var gid: UInt32
    /// Every group the user is in, the primary one included.
    public var groups: [UInt32]
    /// The home folder, for the app's `HOME`.
    public var home: String

    /// Whether this is root.
    public var isRoot: Bool { uid == 0 }

    /// `name (uid N)`.
    public var description: String { "\(name) (uid \(uid))" }

    /// The user with this login name, or this number.
    ///
    /// - Throws: ``HostError/Code/launchFailed`` when there is no such user.
    public static func named(_ name: String) throws(HostError) -> AppUser {
        if let entry = lookUp({ getpwnam_r(name, &$0, $1, $2, &$3) }) { return entry }
        if let uid = UInt32(name), let entry = withID(uid) { return entry }
        throw HostError(.launchFailed, "no user \(name) on this machine (see getent passwd)")
    }

    /// The user with this id, or `nil` when the database has none.
    public static func withID(_ uid: UInt32) -> AppUser? {
        lookUp { getpwuid_r(uid_t(uid), &$0, $1, $2, &$3) }
    }

    /// The user the host itself runs as.
    public static var current: AppUser {
        withID(UInt32(geteuid()))
            ?? AppUser(name: "\(geteuid())", uid: UInt32(geteuid()), gid: UInt32(getegid()), groups: [], home: "/")
    }

    /// Reads one password entry with `call` (getpwnam_r or getpwuid_r), then its groups.
    private static func lookUp(
        _ call: (inout passwd, UnsafeMutablePointer<CChar>, Int, inout UnsafeMutablePointer<passwd>?) -> Int32
    ) -> AppUser? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        let result = buffer.withUnsafeMutableBufferPointer { call(&entry, $0.baseAddress!, $0.count, &found) }
        guard result == 0, found != nil, let namePointer = entry.pw_name else { return nil }
        let name = String(cString: namePointer)
        let home = entry.pw_dir.map { String(cString: $0) } ?? "/"
        return AppUser(name: name, uid: entry.pw_uid, gid: entry.pw_gid, groups: groups(of: name, gid: entry.pw_gid), home: home)
    }

    /// The user's groups, from the group database (getgrouplist).
    private static func groups(of name: String, gid: gid_t) -> [UInt32] {
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let capacity = count
            if getgrouplist(name, gid, &groups, &count) >= 0 { return Array(groups.prefix(Int(count))) }
            guard count > capacity else { return [gid] }  // no growth asked: give the primary group
        }
    }
}
