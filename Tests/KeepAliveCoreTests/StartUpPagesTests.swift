import Glibc
import KeepAliveCore
import Testing

struct StartUpPagesTests {
    /// A `smaps` file read: each mapping's bounds, permissions, path (spaces and all), resident
    /// memory and pages of the process's own.
    @Test func smapsIsReadMappingByMapping() {
        let smaps = """
            55d0c0000000-55d0c0200000 r--p 00000000 fd:01 42                         /usr/bin/keepalive
            Size:               2048 kB
            Rss:                 612 kB
            Private_Dirty:         0 kB
            Anonymous:             0 kB
            VmFlags: rd mr mw me
            55d0c0f00000-55d0c1000000 r--p 00f00000 fd:01 42                         /usr/bin/keepalive
            Rss:                 556 kB
            Anonymous:           492 kB
            55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0                          [heap]
            Rss:                 800 kB
            Anonymous:           800 kB
            7f00000000-7f00001000 r-xp 00000000 fd:01 77                             /usr/lib/my lib.so (deleted)
            Rss:                   4 kB
            Anonymous:             0 kB
            7f00300000-7f00301000 r-xp 00000000 00:00 0
            Rss:                   4 kB
            """
        let mappings = StartUpPages.mappings(smaps: smaps)
        #expect(mappings.map(\.path) == ["/usr/bin/keepalive", "/usr/bin/keepalive", "[heap]", "/usr/lib/my lib.so (deleted)", ""])
        #expect(mappings[0].start == 0x55d0_c000_0000 && mappings[0].end == 0x55d0_c020_0000)
        #expect(mappings.map(\.permissions) == ["r--p", "r--p", "rw-p", "r-xp", "r-xp"])
        #expect(mappings.map(\.residentKiB) == [612, 556, 800, 4, 4])
        #expect(mappings.map(\.anonymousKiB) == [0, 492, 800, 0, 0])
        #expect(mappings[0].overlaps(0x55d0_c01f_f000..<0x55d0_c030_0000) && !mappings[0].overlaps(0x55d0_c020_0000..<0x55d0_c030_0000))
    }

    /// On a real process (this one): a library's code, read, is unmapped, and the library works
    /// after (its relocated data, which the loader wrote, is kept); a file mapped by other means
    /// is not the loader's and is left alone.
    @Test func aReleaseUnmapsLoadedCodeAndTheLibraryStillWorks() throws {
        // bzip2's library: on every Debian machine (dpkg needs it), and nothing else here calls it.
        let library = try #require(dlopen("libbz2.so.1.0", RTLD_NOW | RTLD_LOCAL), "libbz2.so.1.0: apt-get install libbz2-1.0")
        let compressSymbol = try #require(dlsym(library, "BZ2_bzBuffToBuffCompress"))
        let decompressSymbol = try #require(dlsym(library, "BZ2_bzBuffToBuffDecompress"))
        typealias Compress = @convention(c) (
            UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<CChar>?, UInt32, Int32, Int32,
            Int32
        ) -> Int32
        typealias Decompress = @convention(c) (
            UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<CChar>?, UInt32, Int32, Int32
        ) -> Int32
        let compress = unsafeBitCast(compressSymbol, to: Compress.self)
        let decompress = unsafeBitCast(decompressSymbol, to: Decompress.self)
        let roundTrip = { () -> [CChar] in
            var text = [CChar]((0..<20_000).map { CChar(truncatingIfNeeded: 65 + ($0 * 7 % 26)) })
            var packed = [CChar](repeating: 0, count: 30_000)
            var packedCount = UInt32(packed.count)
            guard compress(&packed, &packedCount, &text, UInt32(text.count), 9, 0, 0) == 0 else { return [] }
            var unpacked = [CChar](repeating: 0, count: text.count)
            var unpackedCount = UInt32(unpacked.count)
            guard decompress(&unpacked, &unpackedCount, &packed, packedCount, 0, 0) == 0 else { return [] }
            return unpackedCount == UInt32(text.count) && unpacked == text ? unpacked : []
        }
        #expect(!roundTrip().isEmpty)

        // Its code, every page read.
        let code = try mapping(containing: UInt(bitPattern: compressSymbol))
        #expect(code.permissions == "r-xp" && code.path.contains("libbz2"))
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var sum: UInt8 = 0
        for page in stride(from: code.start, to: code.end, by: Int(pageSize)) {
            sum &+= UnsafeRawPointer(bitPattern: page)!.load(as: UInt8.self)
        }
        #expect(try mapping(containing: code.start).residentKiB == Int(code.end - code.start) / 1024, "\(sum)")

        // A file mapped by other means, read too.
        let file = try temporaryFile(pages: 16, pageSize: Int(pageSize))
        defer { unlink(file.path) }
        let mapped = try #require(mmap(nil, file.size, PROT_READ, MAP_PRIVATE, file.descriptor, 0))
        close(file.descriptor)
        try #require(mapped != MAP_FAILED)
        defer { munmap(mapped, file.size) }
        for offset in stride(from: 0, to: file.size, by: Int(pageSize)) { sum &+= mapped.load(fromByteOffset: offset, as: UInt8.self) }

        let release = StartUpPages.release()
        #expect(release.segments > 0 && release.residentKiB > 0, "\(release)")
        // In whole pages within the segment: at most its first and last, partly its, stay.
        let left = try mapping(containing: code.start).residentKiB
        #expect(left <= 2 * Int(pageSize) / 1024, "bzip2's code is unmapped: \(left) KiB left of \(code.residentKiB); \(release)")
        #expect(try mapping(containing: UInt(bitPattern: mapped)).residentKiB == file.size / 1024, "not the loader's: kept")
        #expect(!roundTrip().isEmpty, "bzip2 works after, its code read back and its relocated data kept")
    }

    /// The mapping of this process that holds `address`, from its smaps.
    private func mapping(containing address: UInt) throws -> StartUpPages.Mapping {
        let text = try #require(KernelFile.read("/proc/self/smaps"))
        return try #require(StartUpPages.mappings(smaps: text).first { $0.start <= address && address < $0.end })
    }

    /// A new file of `pages` pages, open for reading.
    private func temporaryFile(pages: Int, pageSize: Int) throws -> (path: String, descriptor: Int32, size: Int) {
        var template = "/tmp/start-up-pages-XXXXXX".utf8CString
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(descriptor >= 0)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let size = pages * pageSize
        let bytes = [UInt8](repeating: 7, count: size)
        try #require(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, size) } == size)
        return (path, descriptor, size)
    }
}
