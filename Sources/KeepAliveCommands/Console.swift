import SystemPackage

/// Standard output and error that never crash the tool: a closed pipe (the reader went away)
/// loses the line, as `head` expects, instead of trapping.
package enum Console {
    package static func out(_ text: String) { out(Array(text.utf8)) }
    package static func out(_ bytes: [UInt8]) { _ = try? FileDescriptor.standardOutput.writeAll(bytes) }
    package static func error(_ text: String) { _ = try? FileDescriptor.standardError.writeAll(Array(text.utf8)) }
}
