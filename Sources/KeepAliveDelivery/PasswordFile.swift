import FoundationEssentials
import Glibc

/// Reads a password from a file only its owner can read (mode 0600 or stricter).
enum PasswordFile {
    static func read(_ path: String) throws(DeliveryError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .passwordFile(path, String(cString: strerror(errno))) }
        guard info.st_mode & 0o077 == 0 else {
            throw .passwordFile(path, "readable by others (mode \(String(info.st_mode & 0o777, radix: 8))): chmod 600 \(path)")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw .passwordFile(path, "cannot be read as text")
        }
        var password = Substring(text)
        while let last = password.last, last == "\n" || last == "\r" { password.removeLast() }
        return String(password)
    }
}
