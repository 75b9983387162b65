public import FoundationEssentials

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
        let base = BaseDirectory.config(environment)
        let safeName = String(application.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "_" })
        return AuthorizationFile(
            url: base.appendingPathComponent("location-keepalive/authorization/\(safeName).json")
        )
    }

    /// The stored record, or `nil` when there is no file yet.
    public func load() throws(AuthorizationError) -> AuthorizationRecord? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try VersionedFile.read(
                AuthorizationRecord.self,
                from: url,
                currentVersion: AuthorizationRecord.currentVersion,
                decoder: decoder
            )
        } catch {
            switch error {
            case .unreadable(let reason):
                throw AuthorizationError(
                    .unreadableFile,
                    "cannot read authorization file \(url.path): \(reason). Fix its permissions, "
                        + "or remove it with reset() on the LocationAuthorizationManager (from a shell: keepalive auth reset)"
                )
            case .notVersioned:
                throw damaged("it is not a versioned authorization record")
            case .futureVersion(let version):
                throw AuthorizationError(
                    .futureVersion,
                    "authorization file \(url.path) has version \(version), newer than this keepalive understands "
                        + "(\(AuthorizationRecord.currentVersion)); it is left as it is. Upgrade, or reset it"
                )
            case .damaged(let reason):
                throw damaged(reason)
            }
        }
    }

    private func damaged(_ detail: String) -> AuthorizationError {
        AuthorizationError(
            .damagedFile,
            "authorization file \(url.path) is damaged (\(detail)); location stays off and the file is left "
                + "as it is. Fix it, or replace it with reset() on the LocationAuthorizationManager (from a shell: keepalive auth reset)"
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
            try AtomicFile.write(try encoder.encode(record) + Data("\n".utf8), to: url)
        } catch {
            throw AuthorizationError(
                .writeFailed,
                "cannot save authorization file \(url.path): \(error). The status is unchanged; check that "
                    + "\(directory.path) is writable and has space, or point --auth-file elsewhere"
            )
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
