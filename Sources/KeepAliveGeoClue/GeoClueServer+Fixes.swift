import KeepAliveBus
import FoundationEssentials
import KeepAliveCore

/// Fixes from the host's watch, to each started client as its authorization, level and
/// thresholds allow.
extension GeoClueServer {
    func fixArrived(_ fix: Location) {
        lastFix = fix
        var moved: Set<GeoClueAccuracy> = []
        for level in GeoClueAccuracy.allCases {
            guard let grid = level.grid, level != .none else { continue }
            var position = coarse[level] ?? CoarsePosition(grid: grid)
            if position.update(with: fix) { moved.insert(level) }
            coarse[level] = position
        }
        let now = Self.now()
        for client in clients.values.sorted(by: { $0.number < $1.number }) where client.isActive {
            switch authorizer.access(for: client, now: now) {
            case .denied(let reason):
                deactivate(client, reason: reason, tell: true)
            case .paused:
                continue
            case .deliver(let store):
                let level = min(client.granted, store)
                // A coarse client hears of a new cell only: the same cell again tells nothing.
                if level != .exact, client.current != nil, !moved.contains(level), client.current?.level == level { continue }
                offer(fix, to: client, level: level)
            }
        }
    }

    /// Gives `fix` (coarsened to `level`) to `client`, if its thresholds let it through.
    func offer(_ fix: Location, to client: GeoClueClient, level: GeoClueAccuracy? = nil) {
        let level = level ?? client.granted
        var location = fix
        if level != .exact {
            guard let grid = level.grid, let meters = level.meters else { return }
            let position = coarse[level] ?? {
                var position = CoarsePosition(grid: grid)
                _ = position.update(with: fix)
                return position
            }()
            coarse[level] = position
            guard let coarsened = position.location(like: fix, accuracy: meters) else { return }
            location = coarsened
        }
        // A fix gpsd gave no time has the time it arrived, as GeoClue's (and the thresholds
        // compare that, not nothing).
        if location.timestamp == nil { location.timestamp = Date() }
        // gpsd reports one epoch again as more of its sentences come: the same place at the
        // same time is not a new location.
        if let current = client.current?.location, current.timestamp == location.timestamp,
            current.latitude == location.latitude, current.longitude == location.longitude
        {
            return
        }
        guard client.passesThresholds(location) else { return }
        let (old, new, _) = client.give(location, level: level)
        bus.propertiesChanged(at: client.path, interface: Self.clientInterface, ["Location"])
        // To its connection alone, as GeoClue does: nobody else learns when it moved.
        bus.emit(from: client.path, to: client.owner, interface: Self.clientInterface, member: "LocationUpdated") { signal in
            signal.append(old, type: "o")
            signal.append(new, type: "o")
        }
    }
}
