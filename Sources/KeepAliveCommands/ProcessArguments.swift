import FoundationEssentials
import Glibc

/// The process's arguments, program first.
///
/// `CommandLine.arguments`, or where the Swift runtime did not capture them, the kernel's copy
/// in `/proc/self/cmdline`: under a preloaded library that wraps the C library (libfaketime,
/// which moves the clock for tests and boards alike) a dynamically linked Swift program starts
/// with none, and would run as if given no command.
enum ProcessArguments {
    static let current: [String] = {
        if !CommandLine.arguments.isEmpty { return CommandLine.arguments }
        guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: "/proc/self/cmdline")), !bytes.isEmpty else {
            return ["keepalive"]
        }
        var arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        if bytes.last == 0 { arguments.removeLast() }
        return arguments
    }()
}
