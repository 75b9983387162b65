package import FoundationEssentials

/// The XDG base directories the library keeps its files under, each with its default in the
/// home folder: one rule for the authorization files, the journal and the host's monitors.
package enum BaseDirectory {
    /// `$XDG_STATE_HOME`, or `~/.local/state`.
    package static func state(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        base("XDG_STATE_HOME", home: ".local/state", environment)
    }

    /// `$XDG_CONFIG_HOME`, or `~/.config`.
    package static func config(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        base("XDG_CONFIG_HOME", home: ".config", environment)
    }

    /// The variable's folder when it is set and not empty; else `relative` in `$HOME` (the
    /// user's home from the password database when `HOME` is unset).
    private static func base(_ variable: String, home relative: String, _ environment: [String: String]) -> URL {
        if let folder = environment[variable], !folder.isEmpty { return URL(fileURLWithPath: folder) }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home).appendingPathComponent(relative)
    }
}
