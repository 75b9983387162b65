import ArgumentParser

/// `--config FILE`, of `keepalive run` and `keepalive host`: read by ``ConfiguredArguments``
/// before the command line is parsed; declared here so that help, man pages and completions
/// show it, and so that a reload knows the file.
struct ConfigurationOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Read settings from this file first: its [run] section for run, [host] for host (keepalive.conf(5)). Options given here override them; SIGHUP reads it again.",
            valueName: "file"
        )
    )
    var config: String?
}
