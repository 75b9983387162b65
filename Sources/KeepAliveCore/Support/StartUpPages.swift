import Glibc

/// The code and constants only start-up used, given back once a service has started.
///
/// Starting touches code that never runs again: parsing the command line, opening the journal,
/// loading libraries. The kernel maps each page it reads with its neighbours (it reads ahead
/// and maps around a fault), so a service's resident memory keeps pages it no longer uses.
/// ``release(smaps:)`` unmaps every read-only file mapping none of whose pages the process
/// changed (`madvise(MADV_DONTNEED)`): the pages stay in the page cache, and the ones the
/// service still uses come back at their next touch, from memory, without a read. What is
/// released is only ever a copy of a file: a page the process wrote (relocated data, the
/// heap, stacks) is in a mapping this never touches.
///
/// On a small board this is memory the kernel can take back: a mapped page of code is kept in
/// preference to an unmapped one.
package enum StartUpPages {
    /// How long a service starts for before its start-up pages are given back; `keepalive run`
    /// tells systemd it is ready by then at the latest.
    package static let startUpPeriod: Duration = .seconds(10)

    /// One mapping of the process, as `/proc/self/smaps` describes it.
    package struct Mapping: Equatable, Sendable {
        package var start: UInt
        package var end: UInt
        /// `r-xp`, `r--p`, `rw-p`...
        package var permissions: String
        package var path: String
        package var residentKiB = 0
        /// Pages of this mapping that are the process's own (copied when written), not the
        /// file's. (A page of the file itself that is not yet written back counts as
        /// `Private_Dirty` but is the page cache's: unmapping it loses nothing.)
        package var anonymousKiB = 0

        /// Read-only, private, backed by a file, and not one page the process's own: unmapping
        /// it loses nothing, since every page is the file's and can be read again.
        package var isReleasable: Bool {
            let flags = Array(permissions.utf8)
            return flags.count == 4 && flags[0] == UInt8(ascii: "r") && flags[1] == UInt8(ascii: "-")
                && flags[3] == UInt8(ascii: "p") && path.hasPrefix("/") && anonymousKiB == 0
        }
    }

    /// What a release did.
    package struct Release: Equatable, Sendable {
        /// Mappings unmapped.
        package var mappings = 0
        /// Their resident memory before, in KiB.
        package var residentKiB = 0
        /// Mappings `madvise` refused (each is left as it was).
        package var refused = 0
    }

    /// The mappings in the text of a `smaps` file.
    package static func mappings(smaps text: String) -> [Mapping] {
        var mappings: [Mapping] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.hasSuffix(":") {
                // "Rss:   1234 kB"
                guard !mappings.isEmpty, fields.count >= 2, let kib = Int(fields[1]) else { continue }
                switch first {
                case "Rss:": mappings[mappings.count - 1].residentKiB = kib
                case "Anonymous:": mappings[mappings.count - 1].anonymousKiB = kib
                default: break
                }
                continue
            }
            // "7f1c2a000000-7f1c2a200000 r-xp 00000000 fd:01 1234   /usr/lib/x86_64-linux-gnu/libc.so.6"
            let bounds = first.split(separator: "-")
            guard fields.count >= 5, bounds.count == 2, let start = UInt(bounds[0], radix: 16),
                let end = UInt(bounds[1], radix: 16), start < end
            else { continue }
            let path = fields.count > 5 ? fields[5...].joined(separator: " ") : ""
            mappings.append(Mapping(start: start, end: end, permissions: String(fields[1]), path: path))
        }
        return mappings
    }

    /// Unmaps the process's releasable mappings (see ``Mapping/isReleasable``), read from its
    /// `smaps` file. Nothing is done when the file cannot be read.
    @discardableResult
    package static func release(smaps path: String = "/proc/self/smaps") -> Release {
        guard let text = KernelFile.read(path) else { return Release() }
        var release = Release()
        for mapping in mappings(smaps: text) where mapping.isReleasable {
            let start = UnsafeMutableRawPointer(bitPattern: mapping.start)
            if madvise(start, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 {
                release.mappings += 1
                release.residentKiB += mapping.residentKiB
            } else {
                release.refused += 1
            }
        }
        return release
    }
}
