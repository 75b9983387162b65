import FoundationEssentials
import Glibc

extension Error {
    /// A short reason for a failed file operation, in words ("permission denied").
    ///
    /// FoundationEssentials has no `localizedDescription`; this names the common cases from the
    /// error's POSIX code and falls back to the error itself.
    package var fileErrorText: String {
        if let posix = self as? POSIXError { return String(cString: strerror(posix.code.rawValue)).lowercased() }
        guard let cocoa = self as? CocoaError else { return "\(self)" }
        if let posix = cocoa.underlying as? POSIXError {
            return String(cString: strerror(posix.code.rawValue)).lowercased()
        }
        switch cocoa.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory"
        case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
        case .fileWriteOutOfSpace: return "no space left on device"
        case .fileWriteVolumeReadOnly: return "read-only file system"
        case .fileReadCorruptFile: return "the file is corrupt"
        case .fileReadInapplicableStringEncoding: return "the file is not UTF-8 text"
        default: return "\(cocoa.code)"
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks.
    package var trimmed: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
