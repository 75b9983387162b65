import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// GeoClue2 served by `keepalive host --geoclue`, with clients nobody here wrote: Debian's
/// `where-am-i` (libgeoclue), libgeoclue's GObject bindings from python (`geoclue-probe`),
/// `gdbus`, on a private system bus, reading a real gpsd that replays the boat's log.
@Suite(.timeLimit(.minutes(4)))
struct GeoClueTests {
    static let boat = NMEAFixture("bundg_zeus_9.log", folder: "tracks")

    /// Runs `body` with a bus, gpsd replaying the boat (looped) and the host serving GeoClue2.
    static func withService<R: Sendable>(
        cycle: Double = 0.05, extra: [String] = [], _ body: (GeoClueHarness, Int) async throws -> R
    ) async throws -> R {
        let harness = try await GeoClueHarness()
        let port = try await Tools.freePort()
        return try await withGPSFake(log: boat.url, port: port, cycle: cycle) {
            try await waitUntilGPSDAccepts(port: port)
            try await harness.startHost(gpsd: port, extra: extra)
            return try await body(harness, port)
        }
    }

    /// `where-am-i`'s locations: each "New location:" block's latitude, longitude and
    /// accuracy, with the time its first line came.
    static func whereAmILocations(_ output: String) -> [(time: Double, latitude: Double, longitude: Double, accuracy: Double)] {
        var locations: [(Double, Double, Double, Double)] = []
        var current: (time: Double, latitude: Double?, longitude: Double?)?
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let time = Double(parts[0]) else { continue }
            let text = parts[1].trimmingCharacters(in: .whitespaces)
            let number = { (prefix: String) in Double(text.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces).split(separator: "°")[0].split(separator: " ")[0]) }
            if text.hasPrefix("New location:") {
                current = (time, nil, nil)
            } else if text.hasPrefix("Latitude:") {
                current?.latitude = number("Latitude:")
            } else if text.hasPrefix("Longitude:") {
                current?.longitude = number("Longitude:")
            } else if text.hasPrefix("Accuracy:"), let found = current, let latitude = found.latitude, let longitude = found.longitude,
                let accuracy = number("Accuracy:")
            {
                locations.append((found.time, latitude, longitude, accuracy))
                current = nil
            }
        }
        return locations
    }

    /// gpsd's own fixes as a plain gpsd client (`gpspipe -w`) got them, with their arrival times.
    static func gpsdFixes(_ output: String) -> [(time: Double, latitude: Double, longitude: Double)] {
        output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let time = Double(parts[0]),
                let object = try? JSONSerialization.jsonObject(with: Data(parts[1].utf8)) as? [String: Any],
                object["class"] as? String == "TPV", let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double
            else { return nil }
            return (time, latitude, longitude)
        }
    }

    /// Every position in the boat's log: each GGA's, GLL's and RMC's (`ddmm.mmmm`), in degrees.
    static func loggedPositions() throws -> [(latitude: Double, longitude: Double)] {
        let degrees = { (value: Substring, hemisphere: Substring, width: Int) -> Double? in
            guard value.count > width, let whole = Double(value.prefix(width)), let minutes = Double(value.dropFirst(width)) else { return nil }
            return (whole + minutes / 60) * (hemisphere == "S" || hemisphere == "W" ? -1 : 1)
        }
        return String(decoding: try boat.bytes(), as: UTF8.self).split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            let first = switch fields.first?.suffix(3) { case "GGA": 2; case "GLL": 1; case "RMC": 3; default: -1 }
            guard first > 0, fields.count > first + 3, let latitude = degrees(fields[first], fields[first + 1], 2),
                let longitude = degrees(fields[first + 2], fields[first + 3], 3)
            else { return nil }
            return (latitude, longitude)
        }
    }

    static func probeLines(_ process: ChildProcess) -> [[String: Any]] {
        process.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    @Test func whereAmIPrintsGPSDsFixesFromTheHostWithinASecond() async throws {
        try await Self.withService(cycle: 0.03) { harness, port in
            try await harness.authorize("geoclue-where-am-i", "always")
            let stamp = Tools.repository.appendingPathComponent("scripts/stamp-lines").path
            let gpspipe = try ChildProcess(stamp, ["/usr/bin/gpspipe", "-w", "127.0.0.1:\(port)"], output: harness.directory + "/gpspipe.out")
            // where-am-i only once gpspipe reads fixes: on a loaded machine its first location
            // could otherwise be one gpsd sent before gpspipe had connected.
            try await eventually("gpspipe's first fix", context: { gpspipe.tail }) {
                !Self.gpsdFixes(gpspipe.output).isEmpty
            }
            let whereAmI = try ChildProcess(
                stamp, ["/usr/bin/stdbuf", "-oL", GeoClueHarness.whereAmI, "--timeout", "12"],
                output: harness.directory + "/where-am-i.out", environment: harness.environment
            )
            await whereAmI.wait(timeout: .seconds(60))
            gpspipe.signal(SIGTERM)
            await gpspipe.wait()

            let printed = Self.whereAmILocations(whereAmI.output)
            let fixes = Self.gpsdFixes(gpspipe.output)
            #expect(printed.count >= 5, "where-am-i printed locations for 12 s:\n\(whereAmI.output.suffix(2000))\n\(harness.events.suffix(5))")
            #expect(!fixes.isEmpty, "gpspipe saw gpsd's fixes:\n\(gpspipe.output.prefix(2000))")
            // Each is one of the log's positions, to where-am-i's 6 decimals (gpsd reports the
            // position of each sentence that has one: GGA, GLL and RMC); the first is the one the service had when it
            // started (as GeoClue's cache), the others arrive as gpsd's do. gpspipe is the
            // yardstick of time, not of membership: gpsd drops a message for a client whose socket
            // is full and goes on (gpsd.c's throttled_write, EAGAIN), as a starved gpspipe's is on a
            // loaded machine, so a fix the host's watch read may be missing from gpspipe's output.
            let logged = try Self.loggedPositions()
            var latencies: [Double] = []
            for (index, location) in printed.enumerated() {
                let isLogged = logged.contains { abs($0.latitude - location.latitude) < 5e-7 && abs($0.longitude - location.longitude) < 5e-7 }
                #expect(isLogged, "where-am-i's \(location) is one of the log's positions")
                // gpsd sends an epoch's TPV again as more of its sentences come: the first is when
                // gpsd had the fix. (The replay takes 100 s to loop, longer than this test.)
                let same = fixes.first { abs($0.latitude - location.latitude) < 5e-7 && abs($0.longitude - location.longitude) < 5e-7 }
                if index > 0, let same { latencies.append(location.time - same.time) }
            }
            #expect(latencies.count >= (printed.count - 1) / 2, "gpspipe saw most of where-am-i's fixes: \(latencies.count) of \(printed.count - 1)")
            let median = Self.median(latencies)
            print("GeoClue2 where-am-i: \(printed.count) locations, latency behind gpspipe median \(median) s, most \(latencies.max() ?? .nan) s")
            // A second, as the issue asks (ten under TSan, which slows every process tenfold).
            let bound = Double(Tools.bound(.seconds(1)).components.seconds)
            #expect(median < bound, "median latency behind a plain gpsd client: \(latencies)")
        }
    }

    @Test func distanceAndTimeThresholdsAreHonoured() async throws {
        try await Self.withService(cycle: 0.02) { harness, _ in
            try await harness.authorize("threshold-probe", "always")
            let everything = try harness.follow("threshold-probe", seconds: 15)
            let byTime = try harness.follow("threshold-probe", time: 4, seconds: 15)
            let byDistance = try harness.follow("threshold-probe", distance: 10, seconds: 15)
            for probe in [everything, byTime, byDistance] { await probe.wait(timeout: .seconds(90)) }
            let all = Self.probeLines(everything).filter { $0["lat"] != nil }
            let timed = Self.probeLines(byTime).filter { $0["lat"] != nil }
            let distant = Self.probeLines(byDistance).filter { $0["lat"] != nil }
            #expect(all.count >= 10, "no threshold: every fix\n\(everything.output.suffix(1000))")
            #expect(timed.count >= 2 && timed.count < all.count, "TimeThreshold 4 s: \(timed.count) of \(all.count)")
            #expect(distant.count >= 2 && distant.count < all.count, "DistanceThreshold 10 m: \(distant.count) of \(all.count)")
            for (earlier, later) in zip(timed, timed.dropFirst()) {
                let gap = abs((later["timestamp"] as! Double) - (earlier["timestamp"] as! Double))
                #expect(gap >= 4, "TimeThreshold: \(gap) s between two locations")
            }
            for (earlier, later) in zip(distant, distant.dropFirst()) {
                let a = Location(latitude: earlier["lat"] as! Double, longitude: earlier["lon"] as! Double)
                let b = Location(latitude: later["lat"] as! Double, longitude: later["lon"] as! Double)
                #expect(b.distance(from: a) >= 10, "DistanceThreshold: \(b.distance(from: a)) m between two locations")
            }
        }
    }

    @Test func aDeniedOrUndecidedAppIsRefusedWithTheReason() async throws {
        try await Self.withService { harness, _ in
            // Never decided: no record in the store.
            let undecided = try await harness.run(GeoClueHarness.whereAmI, ["--timeout", "10"])
            #expect(undecided.status != 0)
            #expect(undecided.output.contains("AccessDenied"), "\(undecided.output)")
            #expect(undecided.output.contains("location is not-determined for geoclue-where-am-i"), "\(undecided.output)")
            try await harness.authorize("geoclue-where-am-i", "denied")
            let denied = try await harness.run(GeoClueHarness.whereAmI, ["--timeout", "10"])
            #expect(denied.status != 0)
            #expect(denied.output.contains("location is denied for geoclue-where-am-i"), "\(denied.output)")
            #expect(denied.output.contains("keepalive auth set when-in-use --app geoclue-where-am-i"), "it says what to do")
            // When in use, outside the host and any logind session: never in use.
            try await harness.authorize("geoclue-where-am-i", "when-in-use")
            let outside = try await harness.run(GeoClueHarness.whereAmI, ["--timeout", "10"])
            #expect(outside.status != 0)
            #expect(outside.output.contains("in no active logind session"), "\(outside.output)")
            #expect(harness.events.contains { $0["event"] as? String == "refused" }, "the host said so")
        }
    }

    @Test func cityLevelGetsACoarsePositionThatStaysPutAndReducedAccuracyGetsStreetLevel() async throws {
        try await Self.withService { harness, _ in
            try await harness.authorize("geoclue-where-am-i", "always")
            try await harness.authorize("reduced-probe", "always", accuracy: "reduced")
            // 30 s each: a loaded machine once gave neither client a location in 10 s (the boat
            // stays in its cell for the whole log, so a longer run proves the same).
            let reduced = try harness.follow("reduced-probe", accuracy: 8, seconds: 30)
            let city = try await harness.run(GeoClueHarness.whereAmI, ["--timeout", "30", "--accuracy-level", "4"])
            await reduced.wait(timeout: .seconds(60))
            // The boat stays in one 0.1° cell (52.8-52.9 N, 5.3-5.4 E): one location, its centre.
            let stamped = city.output.split(separator: "\n").map { "0 " + $0 }.joined(separator: "\n")
            let locations = Self.whereAmILocations(stamped)
            #expect(locations.count == 1, "one city-level location while the boat stays in its cell:\n\(city.output)")
            #expect(locations.first.map { abs($0.latitude - 52.85) < 1e-6 && abs($0.longitude - 5.35) < 1e-6 } == true, "\(locations)")
            #expect(locations.first?.accuracy == 15_000)
            // The store's reduced accuracy caps an exact request at street level: 0.01° cells.
            let streets = Self.probeLines(reduced).filter { $0["lat"] != nil }
            #expect(!streets.isEmpty, "\(reduced.output)")
            for street in streets {
                let latitude = street["lat"] as! Double, longitude = street["lon"] as! Double
                #expect(street["accuracy"] as? Double == 1_000)
                #expect(abs((latitude / 0.01 - 0.5).rounded() - (latitude / 0.01 - 0.5)) < 1e-6, "a cell's centre: \(latitude)")
                #expect(abs((longitude / 0.01 - 0.5).rounded() - (longitude / 0.01 - 0.5)) < 1e-6, "a cell's centre: \(longitude)")
            }
        }
    }

    @Test func aClientThatLeavesTheBusIsStoppedAndForgotten() async throws {
        try await Self.withService { harness, _ in
            try await harness.authorize("leaver", "always")
            // The name is the host's, not a GeoClue daemon's the bus started.
            let owner = try await harness.run(
                "/usr/bin/gdbus",
                ["call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", "org.freedesktop.GeoClue2"]
            )
            #expect(owner.output.contains("(uint32 \(harness.host?.pid ?? -1),)"), "\(owner.output)")
            let client = try await RawGeoClueClient(harness)
            let path = try #require(await client.manager("GetClient")["ok"] as? [Any])[0] as! String
            #expect(try await client.set(path, "DesktopId", "s", "leaver")["error"] == nil)
            #expect(try await client.call(path, "org.freedesktop.GeoClue2.Client", "Start")["error"] == nil)
            #expect((try await client.get(path, "Active")["ok"] as? [Any])?.first as? Bool == true)
            let inUse = try await harness.gdbus("/org/freedesktop/GeoClue2/Manager", "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.GeoClue2.Manager", "InUse"])
            #expect(inUse.output.contains("true"), "\(inUse.output)")
            try await client.kill()
            try await eventually("the host to drop the client") {
                harness.events.contains { $0["client"] as? String == path && $0["stopped"] as? String == "its connection left the bus" }
            }
            let after = try await harness.gdbus("/org/freedesktop/GeoClue2/Manager", "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.GeoClue2.Manager", "InUse"])
            #expect(after.output.contains("false"), "nothing in use after the client left: \(after.output)")
            let gone = try await harness.gdbus(path, "org.freedesktop.GeoClue2.Client.Start")
            #expect(gone.output.contains("UnknownObject"), "\(gone.output)")
        }
    }

    @Test func unknownObjectsOtherClientsAbsurdThresholdsAndFloodsAreRefused() async throws {
        try await Self.withService { harness, _ in
            try await harness.authorize("owner", "always")
            let owner = try await RawGeoClueClient(harness)
            let path = try #require(await owner.manager("CreateClient")["ok"] as? [Any])[0] as! String
            // Another connection may not use it, nor read where it is.
            let start = try await harness.gdbus(path, "org.freedesktop.GeoClue2.Client.Start")
            #expect(start.output.contains("AccessDenied") && start.output.contains("belongs to another connection"), "\(start.output)")
            let peek = try await harness.gdbus(path, "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.GeoClue2.Client", "Location"])
            #expect(peek.output.contains("AccessDenied"), "\(peek.output)")
            let delete = try await harness.gdbus("/org/freedesktop/GeoClue2/Manager", "org.freedesktop.GeoClue2.Manager.DeleteClient", [path])
            #expect(delete.output.contains("AccessDenied"), "\(delete.output)")
            // Objects that are not there.
            let unknown = try await harness.gdbus("/org/freedesktop/GeoClue2/Client/99999", "org.freedesktop.GeoClue2.Client.Start")
            #expect(unknown.output.contains("UnknownObject"), "\(unknown.output)")
            #expect(try await owner.get(path + "/Location/7", "Latitude", interface: "org.freedesktop.GeoClue2.Location")["error"] as? String == "org.freedesktop.DBus.Error.UnknownObject")
            // Absurd values.
            #expect(try await owner.set(path, "DistanceThreshold", "u", 4_000_000_000)["error"] as? String == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(try await owner.set(path, "TimeThreshold", "u", 10_000_000)["error"] as? String == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(try await owner.set(path, "DesktopId", "s", "../../etc/passwd")["error"] as? String == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(try await owner.set(path, "DistanceThreshold", "u", 500)["error"] == nil)
            #expect((try await owner.get(path, "DistanceThreshold")["ok"] as? [Any])?.first as? Int == 500, "a sane value is kept")
            // Start without a DesktopId: refused, saying what to set.
            let anonymous = try await owner.call(path, "org.freedesktop.GeoClue2.Client", "Start")
            #expect((anonymous["message"] as? String)?.contains("set DesktopId first") == true, "\(anonymous)")
            // A flood of clients from one connection: 8 at most; a flood of calls: 50 a second.
            let flooder = try await RawGeoClueClient(harness)
            let clients = try await flooder.send(["op": "flood", "method": "CreateClient", "count": 40])
            #expect(clients["ok"] as? Int == 8 && clients["org.freedesktop.DBus.Error.LimitsExceeded"] as? Int == 32, "\(clients)")
            let calls = try await flooder.send(["op": "flood", "method": "GetClient", "count": 400])
            #expect((calls["org.freedesktop.DBus.Error.LimitsExceeded"] as? Int ?? 0) > 0, "\(calls)")
            // Nobody else waits for it: the owner's calls go on, and the host is well.
            #expect(try await owner.set(path, "DesktopId", "s", "owner")["error"] == nil)
            #expect(try await owner.call(path, "org.freedesktop.GeoClue2.Client", "Start")["error"] == nil)
            #expect(harness.host?.isRunning == true)
        }
    }

    /// An app under the host is its app whatever its DesktopId says, and when in use means in
    /// the host's foreground: its locations stop in the background (the host's rules keep it
    /// running: `--policy unlimited`) and come again in the foreground.
    @Test func anAppUnderTheHostIsItsAppAndWhenInUseFollowsItsForeground() async throws {
        try await Self.withService(cycle: 0.02, extra: ["--policy", "unlimited", "--signal-other-users"]) { harness, _ in
            try await harness.authorize("tracker", "when-in-use")
            let apps = harness.directory + "/apps"
            try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o1777])
            let keepalive = try Tools.keepalive.path
            func control(_ arguments: [String]) async throws {
                let result = try await harness.run(
                    keepalive, ["host", arguments[0], "--socket", harness.directory + "/host.sock"] + arguments.dropFirst()
                )
                #expect(result.status == 0, "host \(arguments): \(result.output)")
            }
            func launch(_ desktopID: String) async throws {
                try await control([
                    "launch", "--app", "tracker", "--user", "nobody", "--output", "\(apps)/\(desktopID).out",
                    "--env", "DBUS_SYSTEM_BUS_ADDRESS=\(harness.address)", "--", GeoClueHarness.probe, "follow", desktopID, "8", "0", "0", "120",
                ])
            }
            func locations(_ desktopID: String) -> Int {
                ((try? String(contentsOfFile: "\(apps)/\(desktopID).out", encoding: .utf8)) ?? "").split(separator: "\n").count { $0.contains(#""lat""#) }
            }
            // Another app's name, from inside the host's app: refused.
            try await launch("someone-else")
            try await eventually("the impostor refused") {
                ((try? String(contentsOfFile: "\(apps)/someone-else.out", encoding: .utf8)) ?? "").contains("runs as the host's app tracker")
            }
            try await control(["terminate", "--app", "tracker"])
            try await launch("tracker")
            try await eventually("locations in the foreground") { locations("tracker") >= 3 }
            try await control(["background", "--app", "tracker"])
            try await Task.sleep(for: .seconds(2))  // what was on its way
            let inBackground = locations("tracker")
            try await Task.sleep(for: .seconds(4))
            #expect(locations("tracker") == inBackground, "no location in the background with when in use")
            #expect(!harness.events.contains { $0["event"] as? String == "frozen" }, "it ran all along: --policy unlimited")
            try await control(["foreground", "--app", "tracker"])
            try await eventually("locations again in the foreground") { locations("tracker") >= inBackground + 2 }
        }
    }

    /// The user's agent is asked as GeoClue asks it (`AuthorizeApp`), after the store, and the
    /// stricter answer wins: Debian's demo agent refuses an app it has no desktop file for, an
    /// agent that allows city level makes an exact request coarse, and a refusing agent refuses.
    @Test func theUsersAgentIsAskedAndTheStricterAnswerWins() async throws {
        try await Self.withService { harness, _ in
            try await harness.authorize("no-desktop-file", "always")
            try await harness.authorize("geoclue-where-am-i", "always")
            let demo = try ChildProcess("/usr/libexec/geoclue-2.0/demos/agent", [], output: harness.directory + "/demo-agent.out", environment: harness.environment)
            try await eventually("Debian's agent to register") { harness.events.contains { $0["event"] as? String == "geoclue-agent" } }
            let refused = try harness.follow("no-desktop-file", seconds: 5)
            await refused.wait(timeout: .seconds(60))
            #expect(refused.output.contains("the user's agent refused location to no-desktop-file"), "\(refused.output)")
            demo.signal(SIGKILL)
            await demo.wait()

            let city = try ChildProcess(GeoClueHarness.probe, ["agent", "true", "4"], output: harness.directory + "/city-agent.out", environment: harness.environment)
            try await eventually("the city agent to register") { city.output.contains(#""agent""#) }
            let coarse = try await harness.run(GeoClueHarness.whereAmI, ["--timeout", "8"])
            #expect(coarse.output.contains("Accuracy:    15000.000000 meters"), "exact asked, city allowed: city\n\(coarse.output)")
            #expect(city.output.contains(#"{"asked": ["geoclue-where-am-i", 8]}"#), "asked as GeoClue asks: \(city.output)")
            city.signal(SIGKILL)
            await city.wait()

            let no = try ChildProcess(GeoClueHarness.probe, ["agent", "false", "8"], output: harness.directory + "/no-agent.out", environment: harness.environment)
            try await eventually("the refusing agent to register") { no.output.contains(#""agent""#) }
            let denied = try await harness.run(GeoClueHarness.whereAmI, ["--timeout", "8"])
            #expect(denied.output.contains("the user's agent refused location to geoclue-where-am-i"), "\(denied.output)")
            no.signal(SIGKILL)
            await no.wait()
            // With no agent left, the store alone decides.
            try await eventually("the agent forgotten") { harness.events.filter { $0["event"] as? String == "geoclue-agent" && $0["gone"] != nil }.count >= 3 }
            let alone = try await harness.run(GeoClueHarness.whereAmI, ["--timeout", "8"])
            #expect(alone.output.contains("Description: gpsd"), "exact again\n\(alone.output)")
        }
    }
}
