import FoundationEssentials
import KeepAliveCore

/// A monitor's file: versioned JSON of its conditions, each with its state, last event and
/// progress (a significant change's last position, a stay under way), written atomically.
///
/// A file that cannot be read or is not one this library wrote is reported with its path and
/// never overwritten: the monitor does not open.
struct MonitorFile: Sendable {
    /// One condition as saved.
    struct Entry: Sendable, Hashable, Codable {
        var identifier: String
        var record: MonitorRecord
        var significantChange: SignificantChangeTracker?
        var visit: DwellDetector?
    }

    private struct Contents: Codable {
        var version: Int
        var name: String
        var rules: MonitoringRules
        var conditions: [Entry]
    }

    static let currentVersion = 1

    let url: URL

    /// The saved entries and rules; `nil` when there is no file yet.
    func load() throws(MonitoringError) -> (rules: MonitoringRules, entries: [Entry])? {
        let contents: Contents?
        do {
            contents = try VersionedFile.read(Contents.self, from: url, currentVersion: Self.currentVersion)
        } catch {
            switch error {
            case .unreadable(let reason):
                throw MonitoringError(
                    .damagedFile,
                    "cannot read monitor file \(url.path): \(reason). It is left as it is; fix its permissions"
                )
            case .notVersioned:
                throw damaged("it is not a versioned monitor file")
            case .futureVersion(let version):
                throw MonitoringError(
                    .damagedFile,
                    "monitor file \(url.path) has version \(version), newer than this library understands "
                        + "(\(Self.currentVersion)); it is left as it is. Upgrade, or open another file"
                )
            case .damaged(let reason):
                throw damaged(reason)
            }
        }
        guard let contents else { return nil }
        do {
            try contents.rules.validate()
            for entry in contents.conditions { try entry.record.condition.validate() }
        } catch {
            throw damaged(error.message)
        }
        return (contents.rules, contents.conditions)
    }

    private func damaged(_ detail: String) -> MonitoringError {
        MonitoringError(
            .damagedFile,
            "monitor file \(url.path) is damaged (\(detail)); it is left as it is and the monitor does not open. "
                + "Fix it, move it away to start afresh, or open another file"
        )
    }

    /// Writes `entries` (sorted by identifier) atomically.
    func save(name: String, rules: MonitoringRules, entries: [Entry]) throws(MonitoringError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let contents = Contents(
            version: Self.currentVersion,
            name: name,
            rules: rules,
            conditions: entries.sorted { $0.identifier < $1.identifier }
        )
        do {
            try AtomicFile.write(try encoder.encode(contents) + Data("\n".utf8), to: url)
        } catch {
            throw MonitoringError(
                .fileUnwritable,
                "cannot save monitor file \(url.path): \(error). Check that \(url.deletingLastPathComponent().path) "
                    + "is writable and has space"
            )
        }
    }
}
