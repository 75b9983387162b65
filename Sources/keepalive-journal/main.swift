import KeepAliveCommands
import KeepAliveJournalCommands

// The whole command, the journal and delivery linked in: what `keepalive` becomes for
// `journal`, `export`, `upload` and `run --journal/--deliver`.
await KeepAlive.main(journal: JournalCommandSet())
