import Glibc
import KeepAliveCore
import Testing

struct StartUpPagesTests {
    /// Which mappings may be unmapped: read-only private copies of a file that the process never
    /// changed. Relocated data (read-only now, but written once), writable data, the heap, the
    /// stack and shared mappings are kept.
    @Test func onlyUnchangedReadOnlyCopiesOfAFileAreReleasable() {
        let smaps = """
            55d0c0000000-55d0c0200000 r--p 00000000 fd:01 42                         /usr/bin/keepalive
            Size:               2048 kB
            Rss:                 612 kB
            Private_Dirty:         0 kB
            Anonymous:             0 kB
            VmFlags: rd mr mw me
            55d0c0200000-55d0c0f00000 r-xp 00200000 fd:01 42                         /usr/bin/keepalive
            Rss:                9232 kB
            Private_Dirty:         0 kB
            Anonymous:             0 kB
            55d0c0f00000-55d0c1000000 r--p 00f00000 fd:01 42                         /usr/bin/keepalive
            Rss:                 556 kB
            Private_Dirty:       492 kB
            Anonymous:           492 kB
            55d0c1000000-55d0c1100000 rw-p 01000000 fd:01 42                         /usr/bin/keepalive
            Rss:                1352 kB
            Private_Dirty:       200 kB
            Anonymous:           200 kB
            55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0                          [heap]
            Rss:                 800 kB
            Anonymous:           800 kB
            7f00000000-7f00001000 r-xp 00000000 fd:01 77                             /usr/lib/my lib.so (deleted)
            Rss:                   4 kB
            Anonymous:             0 kB
            7f00100000-7f00200000 r--s 00000000 fd:01 78                             /var/lib/shared.bin
            Rss:                  16 kB
            Anonymous:             0 kB
            7f00300000-7f00301000 r-xp 00000000 00:00 0                              [vdso]
            Rss:                   4 kB
            Anonymous:             0 kB
            7f00400000-7f00401000 ---p 00000000 fd:01 77                             /usr/lib/my lib.so (deleted)
            Rss:                   0 kB
            Anonymous:             0 kB
            """
        let mappings = StartUpPages.mappings(smaps: smaps)
        #expect(mappings.count == 9)
        #expect(mappings[5].path == "/usr/lib/my lib.so (deleted)")
        #expect(mappings[1].start == 0x55d0_c020_0000 && mappings[1].end == 0x55d0_c0f0_0000)
        #expect(mappings[1].residentKiB == 9232)
        let releasable = mappings.filter(\.isReleasable).map { "\($0.permissions) \($0.start)" }
        #expect(releasable == ["r--p \(0x55d0_c000_0000)", "r-xp \(0x55d0_c020_0000)", "r-xp \(0x7f_0000_0000)"])
    }

    /// On a real process (this one): a file's pages read through a read-only mapping are
    /// unmapped and read back the same; a mapping whose page the process wrote before making it
    /// read-only (as the loader does to relocated data) keeps its page; and the process runs on.
    @Test func aReleaseUnmapsReadPagesAndKeepsWrittenOnes() throws {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = 64 * pageSize
        var template = "/tmp/start-up-pages-XXXXXX".utf8CString
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(descriptor >= 0)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer {
            close(descriptor)
            unlink(path)
        }
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 4096) }
        try #require(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, size) } == size)

        let code = try #require(mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0))
        try #require(code != MAP_FAILED)
        defer { munmap(code, size) }
        let relocated = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, descriptor, 0))
        try #require(relocated != MAP_FAILED)
        defer { munmap(relocated, size) }
        relocated.storeBytes(of: 0xAB, toByteOffset: 5, as: UInt8.self)
        try #require(mprotect(relocated, size, PROT_READ) == 0)

        let readBack = { (base: UnsafeMutableRawPointer) in (0..<size).map { base.load(fromByteOffset: $0, as: UInt8.self) } }
        #expect(readBack(code) == bytes)
        #expect(try resident(at: code) == size / 1024)

        let release = StartUpPages.release()
        #expect(release.refused == 0)
        #expect(release.mappings > 0 && release.residentKiB >= size / 1024)
        let after = try mapping(at: code)
        #expect(after.residentKiB == 0, "the file's pages are unmapped: \(release) \(after)")
        #expect(try resident(at: relocated) > 0, "the page the process wrote stays")
        #expect(relocated.load(fromByteOffset: 5, as: UInt8.self) == 0xAB)
        #expect(readBack(code) == bytes, "and the file's pages come back the same")
    }

    /// The resident KiB of the mapping starting at `base`, from this process's smaps.
    private func resident(at base: UnsafeMutableRawPointer) throws -> Int {
        try mapping(at: base).residentKiB
    }

    private func mapping(at base: UnsafeMutableRawPointer) throws -> StartUpPages.Mapping {
        let text = try #require(KernelFile.read("/proc/self/smaps"))
        return try #require(StartUpPages.mappings(smaps: text).first { $0.start == UInt(bitPattern: base) })
    }
}
