import KeepAliveCommands
import KeepAliveJournalCommands

// The host's watchdog before anything else (it never starts the concurrency runtime's threads).
KeepAlive.runWatchdogIfAsked()
// The services' one malloc arena, before the first thread.
KeepAlive.prepareServiceHeap()
// Every command, the journal and delivery with them (libsqlite3 is loaded when a journal opens).
await KeepAlive.main(journal: JournalCommandSet())
