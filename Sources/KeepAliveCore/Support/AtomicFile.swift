package import FoundationEssentials
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Writing a small file so that a crash leaves the old one or the new one, never a part.
package enum AtomicFile {
    /// Writes `data` to `url`: a temporary file in the same folder (mode 0600), fsync, rename,
    /// fsync of the folder, which is made (mode 0700) if missing. Temporary files of writers
    /// that died are removed after 10 minutes. Throws what failed, unchanged.
    package static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let temporary = directory.appendingPathComponent(
            ".\(url.lastPathComponent).tmp-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        )
        let descriptor = try FileDescriptor.open(
            FilePath(temporary.path),
            .writeOnly,
            options: [.create, .exclusiveCreate],
            permissions: [.ownerReadWrite]
        )
        do {
            try descriptor.closeAfter {
                _ = try descriptor.writeAll(data)
                guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
            guard rename(temporary.path, url.path) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        let folder = try FileDescriptor.open(FilePath(directory.path), .readOnly)
        try folder.closeAfter { _ = fsync(folder.rawValue) }
        removeStaleTemporaryFiles(of: url)
    }

    /// Temporary files of writers that died (killed between create and rename), after 10 minutes.
    private static func removeStaleTemporaryFiles(of url: URL) {
        let directory = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent).tmp-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            let path = directory.appendingPathComponent(name).path
            let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            if let modified, modified.timeIntervalSinceNow < -600 { try? FileManager.default.removeItem(atPath: path) }
        }
    }
}
