import FoundationEssentials
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring
import Testing

/// The host's notices, typed: each case carries what it says, and the wire stays the line
/// every app already reads.
@Suite struct HostNoticeTests {
    static let event = MonitorEvent(
        identifier: "home", state: .satisfied, date: Date(timeIntervalSince1970: 1_600_000_000),
        location: Location(latitude: 52.5, longitude: 13.4)
    )

    static func line(_ notice: HostNotice) -> String {
        String(decoding: HostProtocol.encode(notice).dropLast(), as: UTF8.self)
    }

    static func notice(_ line: String) throws -> HostNotice {
        try HostProtocol.decoder().decode(HostNotice.self, from: Data(line.utf8))
    }

    /// The lines as apps written against the wire (Python, shell) read them.
    @Test(arguments: [
        (HostNotice.lifecycle(.background), #"{"event":"background","notice":"lifecycle"}"#),
        (.willSuspend(deadline: 0.5), #"{"deadline":0.5,"notice":"will-suspend"}"#),
        (.didResume, #"{"notice":"did-resume"}"#),
        (.taskExpiring(3), #"{"notice":"expiring","task":3}"#),
        (.workExpiring("sync"), #"{"name":"sync","notice":"expiring"}"#),
        (.runTask("sync"), #"{"name":"sync","notice":"run-task"}"#),
        (.terminate, #"{"notice":"terminate"}"#),
    ])
    func eachNoticeIsTheLineAppsRead(notice: HostNotice, line: String) throws {
        #expect(Self.line(notice) == line)
        #expect(try Self.notice(line) == notice)
    }

    @Test func aLocationEventCarriesItsEventAndWhenTheFixArrived() throws {
        let notice = HostNotice.locationEvent(Self.event, received: 12.5)
        let line = Self.line(notice)
        #expect(line.contains(#""notice":"location-event""#) && line.contains(#""received":12.5"#))
        #expect(line.contains(#""identifier":"home""#))
        #expect(try Self.notice(line) == notice)
        #expect(notice.kind == .locationEvent && notice.answer == "location-event")
    }

    /// What an app acknowledges: the move of a lifecycle notice, else the notice's kind.
    @Test func anAppAnswersALifecycleNoticeWithItsMove() {
        #expect(HostNotice.lifecycle(.foreground).answer == "foreground")
        #expect(HostNotice.willSuspend(deadline: 1).answer == "will-suspend")
    }

    /// A notice without what its kind needs is not read as a notice with a hole in it.
    @Test(arguments: [
        #"{"notice":"lifecycle"}"#, #"{"notice":"lifecycle","event":"sideways"}"#, #"{"notice":"will-suspend"}"#,
        #"{"notice":"expiring"}"#, #"{"notice":"run-task"}"#, #"{"notice":"location-event"}"#, #"{"notice":"teleport"}"#,
    ])
    func aNoticeLackingWhatItsKindNeedsIsRefused(line: String) {
        #expect(throws: DecodingError.self) { try Self.notice(line) }
    }
}
