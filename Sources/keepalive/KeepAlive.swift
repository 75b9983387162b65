import ArgumentParser
import Foundation

@main
struct KeepAlive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keepalive",
        abstract: "A keep-alive location service over gpsd.",
        subcommands: [Locate.self, Watch.self, Simulate.self]
    )

    /// Usage errors exit 64 (EX_USAGE), as the issue and sysexits.h ask; ArgumentParser's default is 64 too.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
