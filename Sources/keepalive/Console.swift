import Foundation

/// Standard output and error that never crash the tool: a closed pipe (the reader went away)
/// loses the line, as `head` expects, instead of trapping inside Foundation.
enum Console {
    static func out(_ text: String) { write(text, to: .standardOutput) }
    static func out(_ data: Data) { try? FileHandle.standardOutput.write(contentsOf: data) }
    static func error(_ text: String) { write(text, to: .standardError) }

    private static func write(_ text: String, to handle: FileHandle) {
        try? handle.write(contentsOf: Data(text.utf8))
    }
}
