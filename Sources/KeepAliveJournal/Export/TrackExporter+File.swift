public import FoundationEssentials
import Glibc
import SystemPackage
public import KeepAliveCore

extension TrackExporter {
    /// Writes every fix and event of `journal` whose own time (the fix time, else when it was
    /// journaled) is in `from...to` to `file`; returns how many records, events included.
    ///
    /// The track is written to `file.partial` first, flushed to disk, and renamed over `file`
    /// only once it is complete: a reader never sees half a track, and a failure (a full disk,
    /// a folder that is not there) leaves an earlier `file` as it was and no partial file.
    ///
    /// - Throws: ``TrackExportError`` naming the file and the reason.
    @discardableResult
    public func export(_ journal: FixJournal, from: Date? = nil, to: Date? = nil, into file: URL) throws -> Int {
        let partial = FilePath(file.path + ".partial")
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                partial, .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
            )
        } catch {
            throw TrackExportError(file: file, reason: "cannot create \(partial): \(error)")
        }
        do {
            let count = try descriptor.closeAfter {
                let count = try export(journal, from: from, to: to) { _ = try descriptor.writeAll($0) }
                guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
                return count
            }
            guard rename(partial.string, file.path) == 0 else { throw Errno(rawValue: errno) }
            return count
        } catch {
            unlink(partial.string)
            throw TrackExportError(file: file, reason: "\(error)")
        }
    }
}

extension FixJournal {
    /// Writes the journal's fixes and location events to `file` as a track in `format`, in one
    /// call; returns how many records it wrote, events included (GPX waypoints, GeoJSON points).
    ///
    /// `from...until` (everything by default) is on each record's own time: the receiver's fix
    /// time, or when it was journaled for a fix without one. Not when it was journaled: a fix
    /// from a receiver whose clock was years off when journaled is found by its fix time.
    ///
    /// ```swift
    /// try journal.export(.gpx, to: URL(fileURLWithPath: "today.gpx"), from: .now.addingTimeInterval(-86_400))
    /// ```
    ///
    /// Streamed in constant memory, and written safely (a partial file renamed once complete:
    /// see ``TrackExporter/export(_:from:to:into:)``, which also takes a segment gap and a name).
    @discardableResult
    public func export(_ format: TrackFormat, to file: URL, from: Date? = nil, until: Date? = nil) throws -> Int {
        try TrackExporter(format: format).export(self, from: from, to: until, into: file)
    }
}

/// A track that could not be written: the file, and why (nothing was left half written).
public struct TrackExportError: Error, Sendable, Hashable, DescribedError {
    /// The file that was to be written.
    public var file: URL
    /// What went wrong.
    public var reason: String

    /// The file and the reason.
    public var description: String { "cannot write the track to \(file.path): \(reason)" }
}
