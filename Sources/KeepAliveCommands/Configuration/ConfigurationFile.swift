import FoundationEssentials
import Glibc

/// `/etc/keepalive/keepalive.conf`, read: `[run]` and `[host]` sections of `key = value`
/// lines, each key a long option of that command (`keepalive.conf(5)`).
///
/// ```
/// # keepalive run (keepalive.service)
/// [run]
/// gpsd = localhost:2947
/// deliver = home=mqtts://me@broker.example/owntracks/me/car?password-file=/etc/keepalive/mqtt.pass
/// ```
///
/// The syntax is checked here, line by line; what each setting means is the command's own
/// business (``ConfiguredArguments``). A `#` starts a comment only at the start of a line, so
/// a value (a URL's fragment, a password file's name) may hold one.
package struct ConfigurationFile: Sendable, Equatable {
    /// One `key = value` line.
    package struct Entry: Sendable, Equatable {
        package var key: String
        package var value: String
        /// Counted from 1.
        package var line: Int
    }

    /// The sections a file may have: one per command that reads it.
    package static let sectionNames = ["run", "host"]
    /// Larger than any configuration: a file this size is something else.
    static let largestFile = 256 * 1024

    /// The file, as it was named.
    package let path: String
    /// Each section's entries, in the file's order.
    package private(set) var sections: [String: [Entry]] = [:]

    /// Reads and checks `path`: a regular file, UTF-8, no larger than 256 KiB, that no other
    /// user may change (the host runs as root and does what this file says).
    package static func read(_ path: String) throws(ConfigurationError) -> ConfigurationFile {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw ConfigurationError(file: path, "cannot read it: \(reason) (give another file with --config, or none)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ConfigurationError(file: path, "not a regular file")
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0, info.st_uid == 0 || info.st_uid == getuid() {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw ConfigurationError(
                file: path,
                "other users may change it (mode \(mode)), and the service does what it says: chmod go-w \(path)"
            )
        }
        guard info.st_size <= largestFile else {
            throw ConfigurationError(file: path, "\(info.st_size) bytes is too large for a configuration (at most \(largestFile))")
        }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(file: path, "cannot read it: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(file: path, "not UTF-8 text")
        }
        return try ConfigurationFile(path: path, text: text)
    }

    /// Parses `text`, refusing the first line that is not a comment, a `[section]` heading
    /// or a `key = value` setting inside a section.
    package init(path: String, text: String) throws(ConfigurationError) {
        self.path = path
        var section: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = raw.trimmed
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else {
                    throw ConfigurationError(file: path, line: number, "a section heading ends with ]: '\(line)'")
                }
                let name = line.dropFirst().dropLast().trimmed
                guard Self.sectionNames.contains(name) else {
                    throw ConfigurationError(
                        file: path, line: number,
                        "no section [\(name)]: the sections are \(Self.sectionNames.map { "[\($0)]" }.joined(separator: " and "))"
                    )
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(file: path, line: number, "a setting is 'key = value', not '\(Self.shortened(line))'")
            }
            let key = line[..<equals].trimmed
            var value = line[line.index(after: equals)...].trimmed
            guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
                throw ConfigurationError(
                    file: path, line: number,
                    "'\(Self.shortened(key))' is not a setting's name: names are an option's long name in lower case, such as gpsd or event-budget"
                )
            }
            guard let section else {
                throw ConfigurationError(file: path, line: number, "'\(key)' comes before any section: put it under [run] or [host]")
            }
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())  // quotes keep a value's edge spaces
            }
            sections[section, default: []].append(Entry(key: key, value: value, line: number))
        }
    }

    /// The entries of `section`, in order (none when the file has no such section).
    package func entries(in section: String) -> [Entry] { sections[section] ?? [] }

    private static func shortened(_ text: some StringProtocol) -> String {
        text.count > 60 ? text.prefix(57) + "..." : String(text)
    }
}

extension StringProtocol {
    /// Without the spaces, tabs and carriage returns at either end.
    fileprivate var trimmed: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
