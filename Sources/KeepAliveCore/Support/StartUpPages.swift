import CProcessMemory
import Glibc

/// The code and constants only start-up used, given back once a service has started.
///
/// Starting touches code that never runs again: parsing the command line, opening the journal,
/// loading libraries. The kernel maps each page it reads with its neighbours (it reads ahead
/// and maps around a fault), so a service's resident memory keeps pages it no longer uses.
/// ``release()`` unmaps the read-only segments of the executable and of every loaded library
/// (`madvise(MADV_DONTNEED)`): their pages stay in the page cache, and the ones the service
/// still uses come back at their next touch, from memory, without a read.
///
/// Nothing is lost: a read-only segment (code, constants) is never written, so each of its
/// pages is the file's. Relocated data, which the loader writes before making it read-only,
/// belongs to a writable segment and is never touched; a mapping that holds pages of the
/// process's own anyway (a debugger's breakpoint) is left as it is. The segments are walked
/// with `dl_iterate_phdr`, which holds the loader's lock: a library being loaded or unloaded
/// meanwhile is not among them.
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
        /// Pages of this mapping that are the process's own (copied when written), not the file's.
        package var anonymousKiB = 0

        package func overlaps(_ range: Range<UInt>) -> Bool { start < range.upperBound && range.lowerBound < end }
    }

    /// What a release did.
    package struct Release: Equatable, Sendable {
        /// Read-only segments unmapped.
        package var segments = 0
        /// The resident memory of the mappings they were, before, in KiB.
        package var residentKiB = 0
        /// Segments left as they were: `madvise` refused, or pages of the process's own are there.
        package var kept = 0
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

    /// Unmaps the read-only segments of the executable and its loaded libraries (see the type's
    /// documentation). Nothing is done when `/proc/self/smaps` cannot be read.
    @discardableResult
    package static func release() -> Release {
        guard let text = KernelFile.read("/proc/self/smaps") else { return Release() }
        let walk = SegmentWalk(mappings: mappings(smaps: text), pageSize: UInt(sysconf(Int32(_SC_PAGESIZE))))
        let context = Unmanaged.passUnretained(walk).toOpaque()
        // Under the loader's lock: each object's segments are all mapped, and stay mapped.
        _ = dl_iterate_phdr({ info, _, context in
            guard let info, let context else { return 0 }
            Unmanaged<SegmentWalk>.fromOpaque(context).takeUnretainedValue().release(info.pointee)
            return 0
        }, context)
        return walk.outcome
    }
}

/// What one walk of the loaded objects found and did: on the walking thread only.
private final class SegmentWalk {
    let mappings: [StartUpPages.Mapping]
    let pageSize: UInt
    var outcome = StartUpPages.Release()

    init(mappings: [StartUpPages.Mapping], pageSize: UInt) {
        self.mappings = mappings
        self.pageSize = pageSize
    }

    /// Unmaps one object's read-only loadable segments, in whole pages within each.
    func release(_ object: cmemory_object) {
        // The kernel's vDSO is not a file.
        if let name = object.name, String(cString: name).hasPrefix("linux-") { return }
        guard let segments = object.segments else { return }
        for segment in UnsafeBufferPointer(start: segments, count: Int(object.segmentCount))
        where segment.type == CMEMORY_PT_LOAD && segment.flags & UInt32(CMEMORY_PF_W) == 0 {
            let first = object.address &+ segment.vaddr
            let start = (first + pageSize - 1) & ~(pageSize - 1)
            let end = (first + segment.memsz) & ~(pageSize - 1)
            guard start < end else { continue }
            let range = start..<end
            let inside = mappings.filter { $0.overlaps(range) }
            guard inside.allSatisfy({ $0.anonymousKiB == 0 }),
                madvise(UnsafeMutableRawPointer(bitPattern: start), Int(end - start), MADV_DONTNEED) == 0
            else {
                outcome.kept += 1
                continue
            }
            outcome.segments += 1
            outcome.residentKiB += inside.reduce(0) { $0 + $1.residentKiB }
        }
    }
}
