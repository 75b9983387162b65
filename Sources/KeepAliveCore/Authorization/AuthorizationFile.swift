public import FoundationEssentials
import SystemPackage

/// One application's authorization file: versioned JSON, written atomically with mode 0600.
///
/// By default `$XDG_CONFIG_HOME/location-keepalive/authorization/APP.json` (`~/.config` when
/// the variable is unset). A damaged, unreadable or future-version file is reported, never
/// rewritten: only an explicit reset replaces it.
public struct AuthorizationFile: Sendable, Hashable {
    /// Where the file is.
    public let url: URL

    /// The file at `url` (nothing is read yet).
    public init(url: URL) { self.url = url }

    /// The default file for an application identifier.
    public static func defaultFile(
        for application: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> AuthorizationFile {
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path)
            .appendingPathComponent(".config")
        let safeName = String(application.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "_" })
        return AuthorizationFile(
            url: base.appendingPathComponent("location-keepalive/authorization/\(safeName).json")
        )
    }

    /// The stored record, or `nil` when there is no file yet.
    public func load() throws(AuthorizationError) -> AuthorizationRecord? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            throw AuthorizationError(
                .unreadableFile,
                "cannot read authorization file \(url.path): \(error.fileErrorText). Fix its permissions, "
                    + "or remove it with `keepalive auth reset`"
            )
        }
        struct Versioned: Decodable { var version: Int }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let version = try? decoder.decode(Versioned.self, from: data).version else {
            throw damaged("it is not a versioned authorization record")
        }
        guard version <= AuthorizationRecord.currentVersion else {
            throw AuthorizationError(
                .futureVersion,
                "authorization file \(url.path) has version \(version), newer than this keepalive understands "
                    + "(\(AuthorizationRecord.currentVersion)); it is left as it is. Upgrade, or reset it"
            )
        }
        do {
            return try decoder.decode(AuthorizationRecord.self, from: data)
        } catch {
            throw damaged("\(error)")
        }
    }

    private func damaged(_ detail: String) -> AuthorizationError {
        AuthorizationError(
            .damagedFile,
            "authorization file \(url.path) is damaged (\(detail)); location stays off and the file is left "
                + "as it is. Fix it, or replace it with `keepalive auth reset`"
        )
    }

    /// Writes the record: a temporary file in the same folder (mode 0600), fsync, rename, fsync
    /// of the folder. A crash at any point leaves the old file or the new one, never a part.
    public func save(_ record: AuthorizationRecord) throws(AuthorizationError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let directory = url.deletingLastPathComponent()
        do {
            let data = try encoder.encode(record) + Data("\n".utf8)
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            let temporary = directory.appendingPathComponent(
                ".\(url.lastPathComponent).tmp-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
            )
            let descriptor = try FileDescriptor.open(
                FilePath(temporary.path),
                .writeOnly,
                options: [.create, .exclusiveCreate],
                permissions: [.ownerReadWrite]
            )
            do {
                try descriptor.closeAfter {
                    _ = try descriptor.writeAll(data)
                    guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
                }
                guard rename(temporary.path, url.path) == 0 else { throw Errno(rawValue: errno) }
            } catch {
                try? FileManager.default.removeItem(at: temporary)
                throw error
            }
            let folder = try FileDescriptor.open(FilePath(directory.path), .readOnly)
            try folder.closeAfter { _ = fsync(folder.rawValue) }
            removeStaleTemporaryFiles(in: directory)
        } catch {
            throw AuthorizationError(
                .writeFailed,
                "cannot save authorization file \(url.path): \(error). The status is unchanged; check that "
                    + "\(directory.path) is writable and has space, or point --auth-file elsewhere"
            )
        }
    }

    /// Temporary files of writers that died (killed between create and rename), after 10 minutes.
    private func removeStaleTemporaryFiles(in directory: URL) {
        let prefix = ".\(url.lastPathComponent).tmp-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            let path = directory.appendingPathComponent(name).path
            let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            if let modified, modified.timeIntervalSinceNow < -600 { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    /// Removes the file (reset); a missing file is fine.
    public func remove() throws(AuthorizationError) {
        do {
            try FileManager.default.removeItem(at: url)
        } catch let error as CocoaError where error.code == .fileNoSuchFile {
            return
        } catch {
            throw AuthorizationError(
                .writeFailed,
                "cannot remove authorization file \(url.path): \(error.fileErrorText)"
            )
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
