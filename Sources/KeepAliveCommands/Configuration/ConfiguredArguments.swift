import ArgumentParser
import FoundationEssentials
package import KeepAliveCore

/// The command line of `keepalive run` or `keepalive host` with `--config FILE`: the file's
/// section as the options it stands for, placed before the command line's own, which override
/// them (an option given on the command line drops the file's setting of it, a repeated one
/// such as `--deliver` included).
///
/// A setting's key is the command's long option, so `keepalive run --help` and
/// `keepalive.conf(5)` list the same things; a flag's value is `true` or `false`. The file is
/// checked on its own before the command line is added: an unknown key, a value the option
/// refuses, or settings that do not go together are blamed on their line.
package enum ConfiguredArguments {
    /// A command that reads the configuration file.
    struct Reader {
        /// The words that name the command (`run`; `host` or `host serve`).
        var words: Int
        var section: String
        var type: any ParsableCommand.Type
    }

    /// A command line with its file's settings.
    package struct Expansion: Equatable, Sendable {
        /// What the command parses: the file's settings, then the command line's own options.
        package var arguments: [String]
        /// The configuration file, if the command line names one.
        package var file: String?
        /// The file's settings the command line did not override, in the file's order.
        var settings: [Setting] = []

        /// The keys whose settings differ between `self` and `other`.
        func changedKeys(to other: Expansion) -> [String] {
            func byKey(_ settings: [Setting]) -> [String: [String]] {
                settings.reduce(into: [:]) { $0[$1.key, default: []] += $1.arguments }
            }
            let (old, new) = (byKey(settings), byKey(other.settings))
            return Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }.sorted()
        }
    }

    /// The expansion the process started with (set by `main`), for a reload to compare with.
    package static let started = Locked(Expansion(arguments: []))

    /// Expands `arguments` (without the program) when they name `run` or `host` with
    /// `--config`; returns them as they are otherwise.
    package static func expand(_ arguments: [String]) throws(ConfigurationError) -> [String] {
        try expansion(of: arguments).arguments
    }

    /// `arguments` (without the program) with the settings of the file `--config` names,
    /// when they name `run` or `host`.
    package static func expansion(of arguments: [String]) throws(ConfigurationError) -> Expansion {
        guard let reader = reader(of: arguments), let path = configPath(in: Array(arguments.dropFirst(reader.words))) else {
            return Expansion(arguments: arguments)
        }
        let file = try ConfigurationFile.read(path)
        let given = Array(arguments.dropFirst(reader.words))
        let options = Options(of: reader.type)
        let overridden = options.keys(givenIn: given)
        let kept = try settings(of: file, for: reader, options: options).filter { !overridden.contains($0.key) }
        return Expansion(arguments: Array(arguments.prefix(reader.words)) + kept.flatMap(\.arguments) + given, file: path, settings: kept)
    }

    /// The file's section for the command that reads it, each setting as its arguments,
    /// checked: the section must parse as the command's options on its own.
    static func settings(of file: ConfigurationFile, for reader: Reader, options: Options) throws(ConfigurationError) -> [Setting] {
        let command = "keepalive \(reader.section)"
        var settings: [Setting] = []
        var firstLine: [String: Int] = [:]
        for entry in file.entries(in: reader.section) {
            guard let option = options.byLongName[entry.key], option.isSettable else {
                throw ConfigurationError(
                    file: file.path, line: entry.line,
                    "unknown setting '\(entry.key)' in [\(reader.section)]: \(command) has no --\(entry.key) (keepalive.conf(5) lists the settings)"
                )
            }
            if let first = firstLine[entry.key], !option.isRepeating {
                throw ConfigurationError(
                    file: file.path, line: entry.line,
                    "'\(entry.key)' is set again (first on line \(first)); only a repeatable setting such as deliver may be"
                )
            }
            firstLine[entry.key] = firstLine[entry.key] ?? entry.line
            var arguments: [String]
            if option.isFlag {
                switch entry.value.lowercased() {
                case "true", "yes", "on": arguments = ["--\(entry.key)"]
                case "false", "no", "off": arguments = option.names.contains("--no-\(entry.key)") ? ["--no-\(entry.key)"] : []
                default:
                    throw ConfigurationError(
                        file: file.path, line: entry.line, "'\(entry.key)' is true or false, not '\(entry.value)'"
                    )
                }
            } else {
                guard !entry.value.isEmpty else {
                    throw ConfigurationError(file: file.path, line: entry.line, "'\(entry.key)' needs a value")
                }
                arguments = ["--\(entry.key)=\(entry.value)"]
            }
            settings.append(Setting(key: entry.key, arguments: arguments, line: entry.line))
        }
        // The section on its own, then, if it fails, each first part of it: the setting that
        // makes it fail is the one to blame (the last of a pair that does not go together).
        if let failure = parseFailure(reader.type, settings.flatMap(\.arguments)) {
            for count in 1..<(settings.count + 1) {
                if let failure = parseFailure(reader.type, settings.prefix(count).flatMap(\.arguments)) {
                    throw ConfigurationError(file: file.path, line: settings[count - 1].line, "\(settings[count - 1].key): \(failure)")
                }
            }
            throw ConfigurationError(file: file.path, "[\(reader.section)]: \(failure)")
        }
        return settings
    }

    /// One setting of the file, as the arguments it stands for.
    struct Setting: Equatable, Sendable {
        var key: String
        var arguments: [String]
        var line: Int
    }

    /// The command `arguments` name, if it reads the configuration file.
    static func reader(of arguments: [String]) -> Reader? {
        switch arguments.first {
        case "run": return Reader(words: 1, section: "run", type: KeepAlive.Run.self)
        case "host":
            if arguments.count > 1, arguments[1] == "serve" {
                return Reader(words: 2, section: "host", type: KeepAlive.HostCommand.Serve.self)
            }
            if arguments.count == 1 || arguments[1].hasPrefix("-") {
                return Reader(words: 1, section: "host", type: KeepAlive.HostCommand.Serve.self)
            }
            return nil
        default: return nil
        }
    }

    /// `--config FILE` or `--config=FILE`, before any `--`.
    static func configPath(in arguments: [String]) -> String? {
        var path: String?
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index] != "--" {
            let argument = arguments[index]
            if argument == "--config", index + 1 < arguments.endIndex {
                path = arguments[index + 1]
                index += 1
            } else if argument.hasPrefix("--config=") {
                path = String(argument.dropFirst("--config=".count))
            }
            index += 1
        }
        return path
    }

    /// ArgumentParser's message when `arguments` do not parse as `type`, or `nil`.
    private static func parseFailure(_ type: any ParsableCommand.Type, _ arguments: [String]) -> String? {
        do {
            _ = try type.parse(arguments)
            return nil
        } catch {
            return type.message(for: error)
        }
    }
}

extension ConfiguredArguments {
    /// A command's options, as ArgumentParser describes them (`--experimental-dump-help`).
    struct Options {
        struct Option {
            var longName: String
            var names: [String]
            var isFlag: Bool
            var isRepeating: Bool
            var isSettable: Bool
        }

        var byLongName: [String: Option] = [:]
        /// Every name, `-x` and `--long`, to the option's long name.
        var keyOfName: [String: String] = [:]

        /// What a file may not set: the file itself, and what only asks for help.
        static let unsettable: Set = ["config", "help", "version", "experimental-dump-help", "generate-completion-script"]

        init(of type: any ParsableCommand.Type) {
            struct Dump: Decodable {
                struct Command: Decodable { var arguments: [Argument]? }
                struct Argument: Decodable {
                    struct Name: Decodable {
                        var kind: String
                        var name: String
                    }
                    var kind: String
                    var names: [Name]?
                    var isRepeating: Bool
                    var shouldDisplay: Bool
                }
                var command: Command
            }
            guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(type._dumpHelp().utf8)) else { return }
            for argument in dump.command.arguments ?? [] where argument.kind != "positional" {
                let names = argument.names ?? []
                guard let long = names.first(where: { $0.kind == "long" })?.name else { continue }
                let option = Option(
                    longName: long,
                    names: names.map { $0.kind == "short" ? "-\($0.name)" : "--\($0.name)" },
                    isFlag: argument.kind == "flag",
                    isRepeating: argument.isRepeating,
                    isSettable: argument.shouldDisplay && !Self.unsettable.contains(long)
                )
                byLongName[long] = option
                for name in option.names { keyOfName[name] = long }
            }
            // A flag's `--no-` form (`inversion: .prefixedNo`) comes as an argument of its own:
            // it is the flag's, set in the file by `FLAG = false`.
            for (long, option) in byLongName where option.isFlag && long.hasPrefix("no-") {
                let flag = String(long.dropFirst(3))
                guard var positive = byLongName[flag], positive.isFlag else { continue }
                positive.names += option.names
                byLongName[flag] = positive
                byLongName[long] = nil
                keyOfName["--\(long)"] = flag
            }
        }

        /// The long names of the options `arguments` give (before any `--`).
        func keys(givenIn arguments: [String]) -> Set<String> {
            var keys: Set<String> = []
            for argument in arguments {
                if argument == "--" { break }
                if argument.hasPrefix("--") {
                    let name = String(argument.prefix { $0 != "=" })
                    if let key = keyOfName[name] { keys.insert(key) }
                } else if argument.hasPrefix("-"), argument.count > 1 {
                    for letter in argument.dropFirst() {
                        if let key = keyOfName["-\(letter)"] { keys.insert(key) }
                    }
                }
            }
            return keys
        }
    }
}
