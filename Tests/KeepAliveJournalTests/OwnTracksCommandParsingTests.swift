import Foundation
import KeepAliveCore
import KeepAliveDelivery
import Testing

/// OwnTracks' remote commands as the device reads them: each action, sealed or plain as the
/// key says, and every other message refused with its reason.
@Suite struct OwnTracksCommandParsingTests {
    static func parse(_ text: String, key: OwnTracksEncryption? = nil) throws(OwnTracksError) -> OwnTracksCommand {
        try OwnTracksCommand.parse(Data(text.utf8), encryption: key)
    }

    static func reason(_ text: String, key: OwnTracksEncryption? = nil) -> String {
        do {
            return "taken: \(try parse(text, key: key))"
        } catch {
            return "\(error)"
        }
    }

    @Test func eachActionIsRead() throws {
        #expect(try Self.parse(#"{"_type": "cmd", "action": "reportLocation"}"#) == .reportLocation)
        #expect(try Self.parse(#"{"_type": "cmd", "action": "clearWaypoints"}"#) == .clearWaypoints)
        #expect(try Self.parse(#"{"_type": "cmd", "action": "waypoints"}"#) == .waypoints)
        #expect(try Self.parse(#"{"_type": "cmd", "action": "dump"}"#) == .dump)
        let set = try Self.parse(
            #"{"_type": "cmd", "action": "setWaypoints", "waypoints": {"_type": "waypoints", "waypoints": [{"_type": "waypoint", "desc": "Home", "lat": 52.37, "lon": 4.89, "rad": "150", "tst": 1700000000}]}}"#
        )
        guard case .setWaypoints(let waypoints) = set else { Issue.record("\(set)"); return }
        #expect(waypoints.map(\.identifier) == ["6553f100"] && waypoints[0].radius == 150)
        #expect(
            try Self.parse(#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"_type": "configuration", "monitoring": "2", "locatorInterval": 60}}"#)
                == .setConfiguration(OwnTracksConfigurationChange(monitoring: 2, locatorInterval: 60))
        )
    }

    @Test func everythingElseIsRefusedWithItsReason() {
        let cases: [(String, String)] = [
            ("", "not an OwnTracks message"),
            ("[1, 2]", "not an OwnTracks message"),
            (#"{"_type": "cmd", "action": 7}"#, ".action has the wrong type"),
            (#"{"_type": "transition", "action": "dump"}"#, #"its _type is "transition", not "cmd""#),
            (#"{"_type": "cmd", "action": "setWaypoints"}"#, "setWaypoints without waypoints"),
            (#"{"_type": "cmd", "action": "setWaypoints", "waypoints": {"_type": "card"}}"#, #"_type is "card", not "waypoints""#),
            (#"{"_type": "cmd", "action": "setConfiguration"}"#, "setConfiguration without a configuration"),
            (#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"tid": "XY"}}"#, "also sets tid"),
            (#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"monitoring": 1.5}}"#, "monitoring must be -1"),
            (#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"locatorDisplacement": "far"}}"#, "locatorDisplacement is not a number"),
            (#"{"_type": "cmd", "action": "\#(String(repeating: "x", count: 100))"}"#, "unknown action \"xxxx"),
            (#"{"_type": "encrypted", "data": "AAAA"}"#, "the destination has no key-file"),
        ]
        for (text, words) in cases {
            #expect(Self.reason(text).contains(words), "\(text.prefix(60)): \(Self.reason(text))")
        }
        let long = #"{"_type": "cmd", "action": "dump", "x": ""# + String(repeating: " ", count: OwnTracksCommand.largestPayload) + #""}"#
        #expect(Self.reason(long).contains("more than the 262144 a command may have"))
    }

    @Test func withAKeyOnlyACommandSealedWithItIsTaken() throws {
        let key = OwnTracksEncryption(secret: "shared")
        let sealed = try key.seal(#"{"_type": "cmd", "action": "dump"}"#)
        #expect(try Self.parse(sealed, key: key) == .dump)
        #expect(Self.reason(#"{"_type": "cmd", "action": "dump"}"#, key: key).contains("it is not encrypted"))
        #expect(Self.reason(sealed, key: OwnTracksEncryption(secret: "another")).contains("does not decrypt with this key"))
        let sealedLocation = try key.seal(#"{"_type": "location", "lat": 1, "lon": 2, "tst": 3}"#)
        #expect(Self.reason(sealedLocation, key: key).contains(#"its _type is "location", not "cmd""#))
    }

    /// What an OwnTracks Recorder answers a POST from a device with a key: its whole array
    /// (friends' locations and cards, then the objects of `last/USER/DEVICE/http.json`) sealed
    /// into one envelope (its `http.c`, `dopublish` and `j_encrypt`).
    @Test func aRecordersSealedAnswerIsOpenedWholeAndItsCommandsTaken() throws {
        let key = OwnTracksEncryption(secret: "shared")
        let array = #"[{"_type": "location", "lat": 52.1, "lon": 8.6, "tst": 1700000000, "tid": "fr"}, "#
            + #"{"_type": "card", "name": "A friend"}, {"_type": "cmd", "action": "reportLocation"}, {"_type": "cmd", "action": "dump"}]"#
        let read = OwnTracksCommand.commands(inAnswer: Data(try key.seal(array).utf8), encryption: key)
        #expect(read.compactMap { try? $0.get() } == [.reportLocation, .dump])
        #expect(read.count == 2, "a friend's card or location is neither a command nor a refusal")

        #expect(OwnTracksCommand.commands(inAnswer: Data(try key.seal("[]").utf8), encryption: key).isEmpty, "no friends, no commands: nothing to say")
        let wrongKey = OwnTracksCommand.commands(inAnswer: Data(try OwnTracksEncryption(secret: "other").seal(array).utf8), encryption: key)
        #expect(wrongKey.count == 1 && "\(wrongKey[0])".contains("does not decrypt with this key"))
        let noKey = OwnTracksCommand.commands(inAnswer: Data(try key.seal(array).utf8), encryption: nil)
        #expect(noKey.count == 1 && "\(noKey[0])".contains("no key-file"))
        let notJSON = OwnTracksCommand.commands(inAnswer: Data(try key.seal("<html>").utf8), encryption: key)
        #expect(notJSON.count == 1 && "\(notJSON[0])".contains("not JSON"))
        let plainWithKey = OwnTracksCommand.commands(inAnswer: Data(#"[{"_type": "cmd", "action": "dump"}]"#.utf8), encryption: key)
        #expect(plainWithKey.count == 1 && "\(plainWithKey[0])".contains("it is not encrypted"), "outside the envelope, anyone could have written it")
    }

    @Test func anAnswerOfSealedMessagesGivesItsCommandsAndPassesOverTheRest() throws {
        let key = OwnTracksEncryption(secret: "shared")
        let sealedDump = try key.seal(#"{"_type": "cmd", "action": "dump"}"#)
        let sealedCard = try key.seal(#"{"_type": "card", "name": "A friend"}"#)
        let answer = "[\(sealedDump), \(sealedCard), {\"_type\": \"location\", \"lat\": 1}]"
        let read = OwnTracksCommand.commands(inAnswer: Data(answer.utf8), encryption: key)
        #expect(read.count == 1 && (try? read[0].get()) == .dump, "a friend's card or location is not a command")

        let plain = OwnTracksCommand.commands(
            inAnswer: Data(#"[{"_type": "cmd", "action": "reportLocation"}, {"_type": "cmd", "action": "fly"}, {"_type": "card"}]"#.utf8),
            encryption: nil
        )
        try #require(plain.count == 2)
        #expect((try? plain[0].get()) == .reportLocation)
        #expect(plain.last.map { "\($0)".contains("unknown action") } == true)
        #expect(OwnTracksCommand.commands(inAnswer: Data("[]".utf8), encryption: nil).isEmpty)
        #expect(OwnTracksCommand.commands(inAnswer: Data("{}".utf8), encryption: nil).isEmpty)
        let broken = OwnTracksCommand.commands(inAnswer: Data("<html>".utf8), encryption: nil)
        #expect(broken.count == 1 && "\(broken[0])".contains("not JSON"))
    }
}
