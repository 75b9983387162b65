import Foundation
import KeepAliveDelivery
import Testing

/// A destination with a secret in it is refused, and nothing that says so repeats the secret.
struct DestinationTests {
    /// URLs with a password where the issue's user put one, and where others would.
    static let secretURLs = [
        "mqtt://u:secret@localhost/owntracks/me/phone",
        "mqtts://u:secret@broker:8883/owntracks/me/phone?ca=/etc/ca.pem",
        "owntracks+http://u:secret@recorder:8083/pub?user=me&device=phone",
        "traccar+https://u:secret@traccar:5055/?id=42",
        "mqtt://u:secret@",  // no host
        "ftp://u:secret@host/",  // an unknown scheme
        "mqtt://u:sec ret@host/owntracks/me/phone",  // not a valid URL at all
        "mqtt://u:s@cr/t?x@host/owntracks/me/phone",  // a password with '@', '/' and '?'
        "mqtt://host/owntracks/me/phone?password=secret",
        "traccar+http://host:5055/?id=1&token=secret",
    ]

    @Test(arguments: secretURLs)
    func aURLWithASecretIsRefusedWithoutIt(url: String) {
        let error = #expect(throws: DeliveryError.self) { try Destination(name: "home", url: url) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("password"), "\(text)")
        for piece in ["secret", "sec ret", "s@cr", "cr/t", "t?x"] {
            #expect(!text.contains(piece), "\(text)")
        }
        #expect(text.contains("***"))
    }

    @Test func redactionKeepsWhatIsNotSecret() {
        #expect(Destination.redacted("mqtt://u:pw@host:1883/owntracks/me/phone") == "mqtt://u:***@host:1883/owntracks/me/phone")
        #expect(Destination.redacted("mqtt://u@host/owntracks/me/phone?tid=ph") == "mqtt://u@host/owntracks/me/phone?tid=ph")
        #expect(Destination.redacted("http://h/?user=me&password=pw&device=d") == "http://h/?user=me&password=***&device=d")
        #expect(Destination.redacted("not a url") == "not a url")
    }

    @Test func aURLWithoutASecretStillParses() throws {
        let destination = try Destination(name: "home", url: "mqtt://u@localhost/owntracks/me/phone?password-file=/etc/pw")
        guard case .ownTracksMQTT(let settings) = destination.endpoint else {
            Issue.record("not MQTT: \(destination.endpoint)")
            return
        }
        #expect(settings.username == "u" && settings.passwordFile?.path == "/etc/pw")
    }

    @Test func remoteCommandsAreOnUnlessCmdFalseAndOnlyOverMQTT() throws {
        func takes(_ url: String) throws -> Bool? {
            guard case .ownTracksMQTT(let settings) = try Destination(name: "home", url: url).endpoint else { return nil }
            return settings.takesCommands
        }
        #expect(try takes("mqtt://host/owntracks/me/phone") == true)
        #expect(try takes("mqtt://host/owntracks/me/phone?cmd=false") == false)
        #expect(try takes("mqtts://host/owntracks/me/phone?cmd=1") == true)
        for (url, reason) in [
            ("mqtt://host/owntracks/me/phone?cmd=maybe", "cmd takes true or false"),
            ("owntracks+http://host/pub?user=me&device=phone&cmd=false", "cmd is for OwnTracks over MQTT"),
        ] {
            let error = #expect(throws: DeliveryError.self) { try Destination(name: "home", url: url) }
            #expect(error.map { "\($0)".contains(reason) } == true, "\(String(describing: error))")
        }
    }
}
