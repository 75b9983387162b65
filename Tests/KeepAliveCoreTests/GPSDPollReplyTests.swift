import Foundation
import Testing

@testable import KeepAliveCore

/// gpsd's answer to `?POLL;`, decoded from its JSON (libgps does not).
struct GPSDPollReplyTests {
    private func poll(at time: String, tpv: String) -> [UInt8] {
        Array(#"{"class":"POLL","time":"\#(time)","active":1,"tpv":[\#(tpv)],"sky":[]}"#.utf8)
    }

    private let fresh =
        #"{"class":"TPV","device":"/dev/pts/3","mode":3,"time":"2026-11-22T07:00:00.000Z","lat":48.1173,"lon":11.5167,"#
        + #""altHAE":592.3,"altMSL":545.4,"eph":4.5,"epv":7.1,"speed":0.25,"track":54.7}"#

    @Test func aFreshFixIsAReportWithEveryField() throws {
        let report = try #require(
            GPSDPollReply.report(from: poll(at: "2026-11-22T07:00:01.200Z", tpv: fresh), satellitesUsed: 8)
        )
        let fix = try #require(report.location)
        #expect(report.mode == .threeDimensional)
        #expect(fix.latitude == 48.1173 && fix.longitude == 11.5167)
        #expect(fix.altitudeMSL == 545.4 && fix.horizontalAccuracy == 4.5 && fix.course == 54.7)
        #expect(fix.satellitesUsed == 8 && fix.device == "/dev/pts/3")
        #expect(fix.timestamp == Date(timeIntervalSince1970: 1_795_330_800))
    }

    @Test func aFixOlderThanTwoSecondsOnGPSDsClockIsNeverUsed() {
        #expect(
            GPSDPollReply.report(from: poll(at: "2026-11-22T07:00:02.500Z", tpv: fresh), satellitesUsed: nil) == nil
        )
        #expect(
            GPSDPollReply.report(from: poll(at: "2026-11-22T08:00:00.000Z", tpv: fresh), satellitesUsed: nil) == nil
        )
    }

    @Test func noFixNoPositionOrGarbageIsNoReport() {
        let at = "2026-11-22T07:00:00.500Z"
        for tpv in [
            "",
            #"{"class":"TPV","mode":1,"time":"2026-11-22T07:00:00.000Z"}"#,
            #"{"class":"TPV","mode":3,"time":"2026-11-22T07:00:00.000Z","lat":48.1}"#,
            #"{"class":"TPV","mode":3,"lat":48.1,"lon":11.5}"#,
            #"{"class":"TPV","mode":3,"time":"2026-11-22T07:00:00.000Z","lat":148.1,"lon":11.5}"#,
            #"{"class":"TPV","mode":"3","time":"2026-11-22T07:00:00.000Z","lat":48.1,"lon":11.5}"#,
        ] {
            #expect(GPSDPollReply.report(from: poll(at: at, tpv: tpv), satellitesUsed: nil) == nil, "\(tpv)")
        }
        for garbage in ["", "{", #"{"class":"POLL"}"#, #"{"class":"POLL","time":"yesterday","tpv":[]}"#, "\u{0}\u{ff}"]
        {
            #expect(GPSDPollReply.report(from: Array(garbage.utf8), satellitesUsed: nil) == nil)
        }
    }
}
