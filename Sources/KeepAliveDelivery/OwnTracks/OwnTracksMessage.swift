import FoundationEssentials

/// The OwnTracks messages the device publishes, as the OwnTracks JSON format spells them
/// (see the "OwnTracks" article for every type and what the device does with it). Encoded by
/// ``OwnTracksPayload`` with a `JSONEncoder`, never by hand.
enum OwnTracksMessage {
    /// `_type: location`: where the device is.
    struct Location: Encodable, Equatable {
        let type = "location"
        /// The first 8 characters of the journal record's id: the same on every re-send.
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
}
