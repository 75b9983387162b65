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

    @Test func aFixIsAReportWithEveryFieldAndItsAgeOnGPSDsClock() throws {
        let polled = try #require(
            GPSDPollReply.report(from: poll(at: "2026-11-22T07:00:01.200Z", tpv: fresh), satellitesUsed: 8)
        )
        let fix = try #require(polled.report.location)
        #expect(polled.report.mode == .threeDimensional)
        #expect(fix.latitude == 48.1173 && fix.longitude == 11.5167)
        #expect(fix.altitudeMSL == 545.4 && fix.horizontalAccuracy == 4.5 && fix.course == 54.7)
        #expect(fix.satellitesUsed == 8 && fix.device == "/dev/pts/3")
        #expect(fix.timestamp == Date(timeIntervalSince1970: 1_795_330_800))
        #expect(abs(polled.gpsdAge - 1.2) < 0.001)
    }

    /// The age rule, on a fix of 07:00:00: on the receiver's clock when the source knows it;
    /// before, on gpsd's clock where it agrees with the receiver's, and taken where the two are
    /// too far apart to tell (an old log fed by gpsfake, a clock never set).
    @Test func aPolledFixIsCurrentWhenNoMoreThanTwoSecondsOldOnTheReceiversClock() {
        let fixTime = Date(timeIntervalSince1970: 1_795_330_800)
        // The receiver's clock known: it alone decides, whatever gpsd's clock says.
        #expect(GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: 9 * 365 * 86_400, receiverNow: fixTime + 1.5))
        #expect(!GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: 0.5, receiverNow: fixTime + 2.5))
        #expect(!GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: 9 * 365 * 86_400, receiverNow: fixTime + 3_600))
        // Not known yet: gpsd's clock, where it agrees.
        #expect(GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: 1.2, receiverNow: nil))
        #expect(GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: -30, receiverNow: nil), "gpsd's clock behind the receiver's")
        #expect(!GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: 2.5, receiverNow: nil), "a receiver gone quiet")
        #expect(!GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: 3_600, receiverNow: nil), "a receiver quiet for an hour")
        // Clocks a day or more apart: gpsd's cannot judge the receiver's.
        #expect(GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: 9 * 365 * 86_400, receiverNow: nil), "an old log fed to gpsd")
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
