package import FoundationEssentials

/// Reading a JSON file that carries a `version`: what each of its owners does the same way
/// (authorization, monitors), each with messages of its own for the failures.
package enum VersionedFile {
    /// Why a file could not be read.
    package enum Failure: Error {
        /// The file is there but cannot be read: the reason.
        case unreadable(String)
        /// It is not JSON with a version.
        case notVersioned
        /// Its version is newer than `currentVersion`.
        case futureVersion(Int)
        /// It has a known version but does not decode: the decoder's reason.
        case damaged(String)
    }

    /// The file's contents, or `nil` when there is no file.
    package static func read<Contents: Decodable>(
        _ type: Contents.Type,
        from url: URL,
        currentVersion: Int,
        decoder: JSONDecoder = JSONDecoder()
    ) throws(Failure) -> Contents? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            throw .unreadable(error.fileErrorText)
        }
        guard let version = try? decoder.decode(Versioned.self, from: data).version else { throw .notVersioned }
        guard version <= currentVersion else { throw .futureVersion(version) }
        do {
            return try decoder.decode(Contents.self, from: data)
        } catch {
            throw .damaged("\(error)")
        }
    }
}

/// The one field every versioned file has.
private struct Versioned: Decodable { var version: Int }
