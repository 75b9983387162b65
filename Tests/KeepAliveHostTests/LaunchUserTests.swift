import KeepAliveCore
@testable import KeepAliveHost
import KeepAliveHostProtocol
import Testing

/// Who a launched app runs as (``AppUser/forLaunch(named:by:host:settings:freezer:)``): the
/// rule alone, on users the system's database has here (root and nobody), no host or root needed.
struct LaunchUserTests {
    static let root = AppUser(name: "root", uid: 0, gid: 0, groups: [0], home: "/root")
    static let nobody = AppUser(name: "nobody", uid: 65534, gid: 65534, groups: [65534], home: "/nonexistent")
    static func peer(_ uid: UInt32) -> UnixSocket.Peer { UnixSocket.Peer(pid: 1, uid: uid, gid: uid) }

    static func user(
        _ name: String?, by uid: UInt32, host: AppUser = root, freezer: FreezerKind = .cgroup2,
        _ adjust: (inout AppHost.Configuration) -> Void = { _ in }
    ) throws(HostError) -> AppUser {
        var settings = AppHost.Configuration()
        adjust(&settings)
        return try AppUser.forLaunch(named: name, by: peer(uid), host: host, settings: settings, freezer: freezer)
    }

    @Test func aHostThatIsNotRootStartsAppsOnlyAsItsOwnUser() throws {
        #expect(try Self.user(nil, by: 65534, host: Self.nobody).uid == 65534)
        #expect(throws: HostError.self) { try Self.user("root", by: 65534, host: Self.nobody) }
    }

    @Test func aRootCallerNamesTheUserOrTheHostsDefaultAndNeverRootUnlessAllowed() throws {
        #expect(throws: HostError.self) { try Self.user(nil, by: 0) }  // nobody named, no default
        #expect(try Self.user(nil, by: 0) { $0.defaultUser = "nobody" }.uid == 65534)
        #expect(try Self.user("nobody", by: 0).uid == 65534)
        #expect(throws: HostError.self) { try Self.user("root", by: 0) }
        #expect(try Self.user("root", by: 0) { $0.allowsRootApps = true }.uid == 0)
    }

    @Test func anotherCallerRunsAppsAsItselfOnly() throws {
        #expect(try Self.user(nil, by: 65534).uid == 65534)
        #expect(throws: HostError.self) { try Self.user("root", by: 65534) }
        #expect(throws: HostError.self) { try Self.user(nil, by: 4_000_000_000) }  // not in the user database
    }

    @Test func theSignalFreezerRefusesOtherUsersUnlessAllowed() throws {
        #expect(throws: HostError.self) { try Self.user("nobody", by: 0, freezer: .signal) }
        #expect(try Self.user("nobody", by: 0, freezer: .signal) { $0.allowsSignalsForOtherUsers = true }.uid == 65534)
    }
}
