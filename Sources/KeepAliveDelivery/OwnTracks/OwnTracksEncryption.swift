import CSodium
public import FoundationEssentials
import KeepAliveCore

/// OwnTracks' encrypted payloads: each message sealed with libsodium's secretbox
/// (XSalsa20-Poly1305) under a key shared with its readers, and sent as `{"_type": "encrypted",
/// "data": BASE64}`, `data` being the 24-byte nonce followed by the ciphertext. The key is the
/// secret's first 32 bytes, zero-padded, as the OwnTracks apps and the Recorder make it.
public struct OwnTracksEncryption: Sendable {
    private let key: [UInt8]

    /// The key of a file only its owner can read (mode 0600 or stricter), its text without the
    /// final line break: never given on the command line, where process lists would show it.
    ///
    /// - Throws: ``DeliveryError/passwordFile(_:_:)`` for a missing, unreadable, shared or empty
    ///   file (libsodium is loaded on first use: ``checkLibrary()``).
    public init(keyFile path: String) throws(DeliveryError) {
        let secret = try PasswordFile.read(path)
        guard !secret.isEmpty else { throw .passwordFile(path, "is empty: write the shared encryption key into it") }
        self.init(secret: secret)
    }

    /// The key of `secret` (its first 32 UTF-8 bytes, zero-padded).
    public init(secret: String) {
        var key = Array(secret.utf8.prefix(Int(csodium_key_bytes)))
        key += [UInt8](repeating: 0, count: Int(csodium_key_bytes) - key.count)
        self.key = key
    }

    /// Checks that libsodium can be loaded, saying how to install it.
    public static func checkLibrary() throws(OwnTracksError) {
        if let error = libsodium.error { throw .encryption("libsodium could not be loaded (\(error)): apt-get install libsodium23") }
    }

    /// `json` sealed: the `_type: encrypted` message to send instead.
    public func seal(_ json: String) throws(OwnTracksError) -> String {
        try Self.checkLibrary()
        let message = Array(json.utf8)
        var nonce = [UInt8](repeating: 0, count: Int(csodium_nonce_bytes))
        csodium_random(libsodium.table, &nonce, nonce.count)
        var ciphertext = [UInt8](repeating: 0, count: message.count + Int(csodium_mac_bytes))
        let code = csodium_seal(libsodium.table, &ciphertext, message, UInt64(message.count), nonce, key)
        guard code == 0 else { throw .encryption("crypto_secretbox_easy failed (\(code))") }
        let data = Data(nonce + ciphertext).base64EncodedString()
        return OwnTracksPayload.encode(Sealed(data: data))
    }

    /// The message inside an `_type: encrypted` payload.
    ///
    /// - Throws: ``OwnTracksError/encryption(_:)`` saying what is wrong: not an encrypted
    ///   message, `data` not base64, too short to hold a nonce and a MAC, or not sealed with
    ///   this key (a wrong key and a damaged payload look the same, by design).
    public func open(_ payload: Data) throws(OwnTracksError) -> Data {
        try Self.checkLibrary()
        guard let sealed = try? JSONDecoder().decode(Sealed.self, from: payload), sealed.type == "encrypted" else {
            throw .encryption("not an encrypted OwnTracks message ({\"_type\": \"encrypted\", \"data\": ...})")
        }
        guard let bytes = Data(base64Encoded: sealed.data) else { throw .encryption("its data is not base64") }
        let nonceBytes = Int(csodium_nonce_bytes)
        let macBytes = Int(csodium_mac_bytes)
        guard bytes.count >= nonceBytes + macBytes else {
            throw .encryption("its data has \(bytes.count) bytes, fewer than a nonce and a MAC (\(nonceBytes + macBytes))")
        }
        let nonce = Array(bytes.prefix(nonceBytes))
        let ciphertext = Array(bytes.dropFirst(nonceBytes))
        var message = [UInt8](repeating: 0, count: ciphertext.count - macBytes)
        let code = csodium_open(libsodium.table, &message, ciphertext, UInt64(ciphertext.count), nonce, key)
        guard code == 0 else { throw .encryption("it does not decrypt with this key: a different key, or a damaged message") }
        return Data(message)
    }

    /// The envelope.
    private struct Sealed: Codable {
        var type = "encrypted"
        var data: String

        enum CodingKeys: String, CodingKey {
            case type = "_type", data
        }
    }
}

/// libsodium, loaded on first use.
private let libsodium = LoadedLibrary(empty: csodium_table(), load: csodium_load)
