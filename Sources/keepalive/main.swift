import KeepAliveCommands

// Without the journal: the commands that need it relaunch as keepalive-journal.
await KeepAlive.main(journal: nil)
