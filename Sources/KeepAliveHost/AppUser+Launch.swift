import KeepAliveHostProtocol

extension AppUser {
    /// Who a launched app runs as: the caller, or for a root caller the user it names (or the
    /// host's default, `settings.defaultUser`); never root unless the host allows it; with the
    /// signal freezer, another user's only when the host allows it.
    static func forLaunch(
        named name: String?,
        by caller: UnixSocket.Peer,
        host: AppUser,
        settings: AppHost.Configuration,
        freezer: FreezerKind
    ) throws(HostError) -> AppUser {
        var named: AppUser?
        if let name { named = try AppUser.named(name) }
        guard host.isRoot else {
            if let named, named.uid != host.uid {
                throw HostError(
                    .notPermitted,
                    "this host runs as \(host.name) and starts apps only as \(host.name), not \(named.name): run it as root to start apps as other users"
                )
            }
            return host
        }
        var user: AppUser
        if caller.uid == 0 {
            if named == nil, let name = settings.defaultUser { named = try AppUser.named(name) }
            guard let chosen = named else {
                throw HostError(
                    .notPermitted,
                    "apps never run as root: name the user the app runs as (keepalive host launch --user NAME), or start the host with --app-user NAME"
                )
            }
            user = chosen
        } else {
            guard let caller = AppUser.withID(caller.uid).map({ AppUser(name: $0.name, uid: $0.uid, gid: caller.gid, groups: $0.groups, home: $0.home) })
            else {
                throw HostError(.notPermitted, "uid \(caller.uid) is not in the user database: the host starts apps only as known users")
            }
            if let named, named.uid != caller.uid {
                throw HostError(
                    .notPermitted,
                    "only root may start an app as another user: you are \(caller.name), not \(named.name)"
                )
            }
            user = caller
        }
        if user.isRoot, !settings.allowsRootApps {
            throw HostError(
                .notPermitted,
                "apps never run as root under this host: name an unprivileged user, or start the host with --allow-root-apps (nothing then keeps such an app in its group)"
            )
        }
        if freezer == .signal, user.uid != host.uid, !settings.allowsSignalsForOtherUsers {
            throw HostError(
                .notPermitted,
                "with the signal freezer any process of \(user.name)'s outside the app can thaw it (SIGCONT), so apps of other users are refused: use a cgroup freezer, or start the host with --signal-other-users"
            )
        }
        return user
    }
}
