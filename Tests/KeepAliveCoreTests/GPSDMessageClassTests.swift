import Testing

@testable import KeepAliveCore

/// The class of a gpsd line, read from its first bytes; a line that is not gpsd's is malformed.
struct GPSDMessageClassTests {
    @Test(arguments: [
        (#"{"class":"TPV","mode":3}"#, GPSDMessageClass.tpv),
        (#"{"class":"SKY","satellites":[]}"# + "\r\n", .sky),
        (#"{"class":"POLL","time":"x","tpv":[]}"#, .poll),
        (#"{"class":"DEVICES","devices":[]}"#, .devices),
        (#" {"class":"FUTURE"} "#, .other),
        (#"{"class":""}"#, .other),
        (#"{"mode":3}"#, .malformed),  // an object without a class: it used to read past the end
        (#"{"class":"TPV"#, .malformed),
        (#"{"class":"TPV","lat":52.1,,,"lon"#, .malformed),
        ("", .malformed),
        ("}", .malformed),
        ("{}", .malformed),
        (#"{"class":"#, .malformed),
        ("$GPGGA,1,2,3*00", .malformed),
    ])
    func readsTheClass(line: String, expected: GPSDMessageClass) {
        #expect(GPSDMessageClass(message: Array(line.utf8)) == expected)
    }
}
