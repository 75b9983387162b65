import KeepAliveCommands
import KeepAliveJournalCommands

// Every command, the journal and delivery with them (libsqlite3 is loaded when a journal opens).
await KeepAlive.main(journal: JournalCommandSet())
