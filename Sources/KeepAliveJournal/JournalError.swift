public import KeepAliveCore

/// Why the journal could not be opened or written. Each says which file and what to do.
public enum JournalError: Error, Sendable, Equatable, DescribedError {
    /// The file is not a journal SQLite can read: left as it is.
    case damaged(path: String, detail: String)
    /// The file was written by a newer version of keepalive: left as it is.
    case newerVersion(path: String, unknown: [String])
    /// The disk under the journal is full: what was being stored was not.
    case diskFull(path: String)
    /// The filesystem under the journal is mounted read-only (as one is remounted after a
    /// write error, `errors=remount-ro`): what was stored is kept and can be read.
    case readOnlyFilesystem(path: String)
    /// The file or its folder cannot be opened or written.
    case unavailable(path: String, detail: String)
    /// Anything else SQLite reported.
    case database(path: String, detail: String)
    /// No destination of that name in the journal.
    case unknownDestination(String)

    /// What went wrong, naming the file, and what to do.
    public var description: String {
        switch self {
        case .damaged(let path, let detail):
            "journal \(path) is damaged or not a journal (\(detail)); it was left untouched: move it aside "
                + "(or recover it with `sqlite3 \(path) .recover`) and start again"
        case .newerVersion(let path, let unknown):
            "journal \(path) was written by a newer keepalive (schema \(unknown.joined(separator: ", "))); "
                + "it was left untouched: upgrade keepalive or use another --journal"
        case .diskFull(let path):
            "the disk under journal \(path) is full: free some space "
                + "(what was already stored is kept and still delivered)"
        case .readOnlyFilesystem(let path):
            "the filesystem under journal \(path) is read-only (remounted so after a write error, as a failing SD card is: "
                + "see `dmesg`, check it with fsck); what was already stored is kept and still delivered"
        case .unavailable(let path, let detail):
            "cannot open journal \(path): \(detail)"
        case .database(let path, let detail):
            "journal \(path): \(detail)"
        case .unknownDestination(let name):
            "no destination named \(name) in the journal (see `keepalive journal status`)"
        }
    }
}
