import FoundationEssentials
import KeepAliveMonitoring

/// The OwnTracks messages the device publishes, as the OwnTracks JSON format spells them
/// (see the "OwnTracks" article for every type and what the device does with it). Encoded by
/// ``OwnTracksPayload`` with a `JSONEncoder`, never by hand.
enum OwnTracksMessage {
    /// `_type: location`: where the device is.
    struct Location: Encodable, Equatable {
        let type = "location"
        /// The journal record's ``JournalRecord/shortID``: the same on every re-send.
        var id: String
        var latitude: Double
        var longitude: Double
        /// The fix's time, whole seconds since 1970.
        var time: Int64
        var accuracy: Int64?
        var altitude: Int64?
        var verticalAccuracy: Int64?
        /// km/h.
        var velocity: Int64?
        var course: Int64?
        var battery: Int?
        var trackerID: String?
        /// When the journal stored it, whole seconds since 1970.
        var createdAt: Int64
        /// The names of the regions the device is inside (absent when none).
        var inRegions: [String]?
        /// Their region ids.
        var inRegionIDs: [String]?

        enum CodingKeys: String, CodingKey {
            case type = "_type", id = "_id", latitude = "lat", longitude = "lon", time = "tst", accuracy = "acc"
            case altitude = "alt", verticalAccuracy = "vac", velocity = "vel", course = "cog", battery = "batt"
            case trackerID = "tid", createdAt = "created_at", inRegions = "inregions", inRegionIDs = "inrids"
        }
    }

    /// `_type: transition`: a region entered or left, published on `TOPIC/event`.
    struct Transition: Encodable, Equatable {
        let type = "transition"
        var id: String
        /// `enter` or `leave`.
        var event: String
        /// The region's name.
        var description: String
        /// When the region was defined (its waypoint's `tst`), if known.
        var waypointTime: Int64?
        /// The time of the fix that decided it.
        var time: Int64
        var latitude: Double
        var longitude: Double
        var accuracy: Int64?
        var trackerID: String?
        /// `c`: a circular region (OwnTracks' only kind besides beacons).
        let trigger = "c"
        /// The region's id: its condition's identifier.
        var regionID: String

        enum CodingKeys: String, CodingKey {
            case type = "_type", id = "_id", event, description = "desc", waypointTime = "wtst", time = "tst"
            case latitude = "lat", longitude = "lon", accuracy = "acc", trackerID = "tid", trigger = "t", regionID = "rid"
        }
    }

    /// `_type: waypoint`: one region, as the apps define it.
    struct Waypoint: Encodable, Equatable {
        let type = "waypoint"
        var description: String
        var latitude: Double
        var longitude: Double
        var radius: Double
        var time: Int64
        var regionID: String?

        init(_ waypoint: OwnTracksWaypoint) {
            description = waypoint.description
            latitude = waypoint.center.latitude
            longitude = waypoint.center.longitude
            radius = waypoint.radius
            time = Int64(waypoint.created.timeIntervalSince1970.rounded(.down))
            regionID = waypoint.regionID
        }

        enum CodingKeys: String, CodingKey {
            case type = "_type", description = "desc", latitude = "lat", longitude = "lon", radius = "rad", time = "tst"
            case regionID = "rid"
        }
    }

    /// `_type: waypoints`: the device's set, published on `TOPIC/waypoints` when asked.
    struct Waypoints: Encodable, Equatable {
        let type = "waypoints"
        var waypoints: [Waypoint]

        enum CodingKeys: String, CodingKey {
            case type = "_type", waypoints
        }
    }

    /// `_type: lwt`: the MQTT will, published by the broker when the device goes away unannounced.
    struct LastWill: Encodable, Equatable {
        let type = "lwt"
        /// When the device first connected, whole seconds since 1970.
        var time: Int64

        enum CodingKeys: String, CodingKey {
            case type = "_type", time = "tst"
        }
    }

    /// `_type: status`: the device's state, retained on `TOPIC/status` (see `OwnTracksPresence`).
    struct Status: Encodable, Equatable {
        let type = "status"
        /// What OwnTracks' iOS and Android apps put under `iOS` and `android`, for this device.
        var linux: Device

        /// Whether the device is there.
        enum State: String, Encodable {
            /// Connected.
            case online
            /// Stopped with a goodbye, or gone without one (the will).
            case offline
        }

        struct Device: Encodable, Equatable {
            var state: State
            /// When the state began, whole seconds since 1970: the connection, the goodbye, or
            /// in the will (published when the broker lost the device) the session's start, as
            /// the `lwt`'s `tst`.
            var time: Int64
            /// Whether the device takes remote commands.
            var commands: Bool

            enum CodingKeys: String, CodingKey {
                case state, time = "tst", commands = "cmd"
            }
        }

        enum CodingKeys: String, CodingKey {
            case type = "_type", linux
        }
    }

    /// `_type: configuration`: what the `dump` command publishes on `TOPIC/dump`, with every
    /// secret (the password, the encryption key) left out.
    struct Configuration: Encodable, Equatable {
        let type = "configuration"
        /// OwnTracks' connection mode: 0 MQTT, 3 HTTP.
        var mode: Int
        var host: String?
        var port: Int?
        var tls: Bool?
        /// HTTP: the endpoint.
        var url: String?
        var username: String?
        /// Whether a password is set (never the password).
        var auth: Bool
        var clientId: String?
        var deviceId: String
        var tid: String?
        var pubTopicBase: String?
        var cmd: Bool
        /// Whether payloads are encrypted (never the key).
        var encryption: Bool
        /// The monitoring mode (-1 quiet, 0 manual, 1 significant, 2 move), if the service has one.
        var monitoring: Int?
        /// Move mode's metres.
        var locatorDisplacement: Double?
        /// Move mode's seconds.
        var locatorInterval: Int64?
        var waypoints: [Waypoint]

        enum CodingKeys: String, CodingKey {
            case type = "_type", mode, host, port, tls, url, username, auth, clientId, deviceId, tid, pubTopicBase, cmd
            case encryption, monitoring, locatorDisplacement, locatorInterval, waypoints
        }
    }
}
