/// When an append counts as stored: the SQLite `synchronous` level of the journal (in WAL mode).
public enum JournalDurability: String, Sendable, Hashable, CaseIterable {
    /// `synchronous = FULL`: every commit is fsynced to the write-ahead log before `append`
    /// returns, so a stored fix survives a crash of the process and a power cut.
    case full
    /// `synchronous = NORMAL`: a stored fix survives a crash of the process; a power cut can
    /// lose the commits since the last checkpoint (at most about 1,000 pages of log).
    case normal
}
