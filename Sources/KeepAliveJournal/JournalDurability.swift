/// When a fix the service records counts as stored, and so what a power cut can take.
///
/// Each commit of the journal is fsynced before it returns (SQLite's `synchronous = FULL` in WAL
/// mode), and a commit's fixes are acknowledged (``JournalWriter/Report/stored(_:)``) only then:
/// the modes differ in how many fixes one commit holds. A crash of the process loses what a
/// power cut would, no more.
public enum JournalDurability: String, Sendable, Hashable, CaseIterable {
    /// A commit per fix: a fix is stored before the next is taken, and a power cut loses none
    /// (about 10 KB written to the disk per fix).
    case full
    /// Fixes held in memory and committed together when the group's first fix has waited the
    /// commit interval (a minute unless set) or the group is full: a power cut loses at most that
    /// interval's fixes, in exchange for under 1 KB written per fix at 1 Hz (flash wears less).
    /// Location events, a remote command's fix, a pause and a stop commit at once. A deliverer
    /// given the ``JournalWriter`` sends each fix as it comes, before its commit: a cut can leave
    /// a fix at a server and not in the journal, never the other way round (its `_id` is never
    /// reused; the journaling article's "Journaled and delivered").
    case grouped

    /// The old name of ``grouped`` (it was SQLite's `synchronous = NORMAL`, which kept no bound
    /// on what a power cut took).
    @available(*, deprecated, renamed: "grouped")
    public static var normal: Self { .grouped }

    /// The mode named `text` (`full`, `grouped`, or `normal`, the old name of `grouped`).
    public init?(named text: String) {
        if text == "normal" { self = .grouped } else { self.init(rawValue: text) }
    }
}
