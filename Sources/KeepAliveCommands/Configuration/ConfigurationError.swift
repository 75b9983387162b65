/// A configuration file that cannot be used: the file, the line when one is to blame, and why.
///
/// Its description reads `FILE:LINE: REASON` (or `FILE: REASON`), the form editors and
/// compilers use, so that `vim +LINE FILE` finds it.
package struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The file, as it was named.
    package let file: String
    /// The line to blame, counted from 1; `nil` when the file as a whole is.
    package let line: Int?
    /// What is wrong, and how to put it right.
    package let reason: String

    package init(file: String, line: Int? = nil, _ reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    package var description: String {
        line.map { "\(file):\($0): \(reason)" } ?? "\(file): \(reason)"
    }

    /// sysexits.h's EX_CONFIG: what a service exits with when its configuration is wrong.
    package static let exitCode: Int32 = 78
}
