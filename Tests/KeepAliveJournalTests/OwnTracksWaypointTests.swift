import Foundation
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveMonitoring
import Testing

/// OwnTracks waypoints as regions: a document as the apps export it becomes named circles, and
/// one that is not a set of waypoints is refused whole, saying which waypoint and why.
@Suite struct OwnTracksWaypointTests {
    static func document(_ waypoints: String...) -> Data {
        Data(#"{"_type": "waypoints", "waypoints": [\#(waypoints.joined(separator: ","))]}"#.utf8)
    }

    static let paris = #"{"_type": "waypoint", "desc": "Paris is lovely", "lat": "48.858330", "lon": "2.295130", "rad": "50", "tst": "1385997757", "rid": "f7676c"}"#
    static let home = #"{"_type": "waypoint", "desc": "Home", "lat": 52.37, "lon": 4.89, "rad": 150, "tst": 1700000000}"#

    @Test func aDocumentBecomesNamedCirclesByRegionID() throws {
        let conditions = try OwnTracksWaypoint.conditions(fromJSON: Self.document(Self.paris, Self.home))
        #expect(Set(conditions.keys) == ["f7676c", "6553f100"], "a waypoint without rid is its tst in hex")
        let paris = CircularRegion(
            center: Coordinate(latitude: 48.85833, longitude: 2.29513), radius: 50, name: "Paris is lovely",
            created: Date(timeIntervalSince1970: 1_385_997_757)
        )
        #expect(conditions["f7676c"] == .circle(paris), "numbers written as strings are numbers")
        // A bare array of waypoints is read too.
        let bare = try OwnTracksWaypoint.conditions(fromJSON: Data("[\(Self.home)]".utf8))
        #expect(bare == ["6553f100": conditions["6553f100"]!])
        #expect(try OwnTracksWaypoint.conditions(fromJSON: Self.document()).isEmpty, "no waypoints: no regions")
    }

    @Test(arguments: [
        ("{", "not an OwnTracks waypoints document (not JSON)"),
        (#"{"_type": "location", "waypoints": []}"#, #"the document's _type is "location", not "waypoints""#),
        (#"[{"desc": "x", "lat": 1, "lon": 2, "tst": 3}]"#, "[0].rad is missing"),
        (#"[{"desc": "x", "lat": "north", "lon": 2, "rad": 5, "tst": 3}]"#, #"[0].lat: "north" is not a number"#),
        (#"[{"desc": "", "lat": 1, "lon": 2, "rad": 5, "tst": 3}]"#, "[0].desc: desc is empty"),
        (#"[{"desc": "x", "lat": 1, "lon": 2, "rad": 5, "tst": 3, "rid": "a/b"}]"#, "rid must be 1 to 64 letters, digits, - or _"),
        (#"[{"desc": "x", "lat": 1, "lon": 2, "rad": 5, "tst": -3}]"#, "tst -3.0 is not a time in seconds since 1970"),
        (#"[{"_type": "card", "desc": "x", "lat": 1, "lon": 2, "rad": 5, "tst": 3}]"#, #"_type "card" is not "waypoint""#),
        (#"[{"desc": "Pole", "lat": 91, "lon": 2, "rad": 5, "tst": 3}]"#, #"waypoint 1 ("Pole"): condition "3": a region's centre must be a latitude from -90 to 90"#),
        (#"[{"desc": "x", "lat": 1, "lon": -180.5, "rad": 5, "tst": 3}]"#, "a region's centre must be a latitude from -90 to 90 and a longitude from -180 to 180"),
        (#"[{"desc": "x", "lat": 1, "lon": 2, "rad": 0, "tst": 3}]"#, "a region's radius must be a positive number of metres, not 0.0"),
        (#"[{"desc": "x", "lat": 1, "lon": 2, "rad": -50, "tst": 3}]"#, "a region's radius must be a positive number of metres, not -50.0"),
        (#"[{"desc": "x", "lat": 1, "lon": 2, "rad": 5e9, "tst": 3}]"#, "is more than the largest accepted, 1000 km"),
        (#"[{"desc": "a", "lat": 1, "lon": 2, "rad": 5, "tst": 3}, {"desc": "b", "lat": 1, "lon": 2, "rad": 5, "tst": 3}]"#,
         #"waypoint 2 ("b") has the identifier 3 of an earlier one"#),
    ])
    func aBadDocumentIsRefusedSayingWhy(json: String, reason: String) {
        #expect {
            try OwnTracksWaypoint.conditions(fromJSON: Data(json.utf8))
        } throws: { error in
            "\(error)".contains(reason) && "\(error)".hasPrefix("waypoints: ")
        }
    }
}
