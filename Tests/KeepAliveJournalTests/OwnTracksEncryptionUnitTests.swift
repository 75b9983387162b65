import Foundation
import KeepAliveDelivery
import Testing

/// Sealing and opening OwnTracks' encrypted payloads: a round trip, the key as OwnTracks makes
/// it, and every damaged or foreign payload refused saying why, never a crash.
@Suite struct OwnTracksEncryptionUnitTests {
    static let message = #"{"_type":"location","lat":52.1,"lon":4.2,"tst":1700000000}"#

    @Test func aSealedMessageOpensWithItsKeyAndShowsNothingOfIt() throws {
        let encryption = OwnTracksEncryption(secret: "shared")
        let sealed = try encryption.seal(Self.message)
        let envelope = try #require(JSONSerialization.jsonObject(with: Data(sealed.utf8)) as? [String: String])
        #expect(Set(envelope.keys) == ["_type", "data"] && envelope["_type"] == "encrypted")
        #expect(!sealed.contains("52.1"))
        let bytes = try #require(Data(base64Encoded: envelope["data"]!))
        #expect(bytes.count == 24 + Self.message.utf8.count + 16, "nonce, ciphertext, MAC")
        #expect(String(decoding: try encryption.open(Data(sealed.utf8)), as: UTF8.self) == Self.message)
        #expect(try encryption.seal(Self.message) != sealed, "a fresh nonce each time")
        // The key is the secret's first 32 bytes: a longer one that agrees on them opens it too.
        let long = String(repeating: "k", count: 32)
        #expect(try OwnTracksEncryption(secret: long + "tail").open(Data(OwnTracksEncryption(secret: long).seal("x").utf8)) == Data("x".utf8))
    }

    @Test func aWrongKeyOrADamagedPayloadIsAClearError() throws {
        let sealed = try OwnTracksEncryption(secret: "shared").seal(Self.message)
        let envelope = try #require(JSONSerialization.jsonObject(with: Data(sealed.utf8)) as? [String: String])
        var tampered = try #require(Data(base64Encoded: envelope["data"]!))
        tampered[30] ^= 1
        let cases: [(String, String)] = [
            (sealed, "it does not decrypt with this key: a different key, or a damaged message"),
            (#"{"_type":"encrypted","data":"\#(tampered.base64EncodedString())"}"#, "it does not decrypt with this key"),
            (#"{"_type":"encrypted","data":"not base64!"}"#, "its data is not base64"),
            (#"{"_type":"encrypted","data":"AAAA"}"#, "its data has 3 bytes, fewer than a nonce and a MAC (40)"),
            (#"{"_type":"location","data":"AAAA"}"#, "not an encrypted OwnTracks message"),
            ("not json", "not an encrypted OwnTracks message"),
        ]
        let wrong = OwnTracksEncryption(secret: "another")
        for (payload, reason) in cases {
            let key = payload == cases[1].0 ? OwnTracksEncryption(secret: "shared") : wrong
            #expect {
                try key.open(Data(payload.utf8))
            } throws: { error in
                "\(error)" == "encrypted payload: \(reason)" || "\(error)".hasPrefix("encrypted payload: \(reason)")
            }
        }
    }
}
