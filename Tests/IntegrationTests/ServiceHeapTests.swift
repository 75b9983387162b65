import Foundation
import IntegrationSupport
import LocationKeepAliveMocks
import Subprocess
import Testing

/// The service allocates from one malloc arena (`ServiceHeap`), read from its memory map: glibc
/// gives each arena but the first a heap of its own, a 64 MiB reservation aligned on 64 MiB.
@Suite(.timeLimit(.minutes(3)))
struct ServiceHeapTests {
    @Test func runAllocatesFromOneMallocArena() async throws {
        let log = NMEAFixture("telit-he910.log").url.path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("service-heap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Without the one arena, the same command showed 4 arena heaps here.
        let run = try await arenaHeaps([
            "run", "--replay", log, "--speed", "1", "--json", "--audio-device", "null", "--app", "heap",
            "--auth-file", folder.appendingPathComponent("auth.json").path,
        ])
        #expect(run == 0, "the service's threads share the first arena")
    }

    /// The count itself, on a memory map with one arena's heap (its used part and its reserve), a
    /// thread's stack and its guard, and an anonymous mapping off the 64 MiB boundary.
    @Test func anArenaHeapIsCountedOnceAndNothingElse() {
        let maps = """
            55d0c0000000-55d0c0200000 r--p 00000000 fd:01 42                         /usr/bin/keepalive
            7f3c64000000-7f3c64021000 rw-p 00000000 00:00 0
            7f3c64021000-7f3c68000000 ---p 00000000 00:00 0
            7f3c6c000000-7f3c6c001000 ---p 00000000 00:00 0
            7f3c6c001000-7f3c6c801000 rw-p 00000000 00:00 0
            7f3c70100000-7f3c74100000 rw-p 00000000 00:00 0
            7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0                          [stack]
            """
        #expect(Self.arenaHeaps(maps: maps) == 1)
        #expect(Self.arenaHeaps(maps: "") == 0)
    }

    /// How many heaps of arenas other than the first the command has, once it printed three lines.
    private func arenaHeaps(_ arguments: [String]) async throws -> Int {
        let (heaps, _) = try await RunningCommand.run(try Tools.keepalive.path, arguments) { command in
            for _ in 0..<3 { _ = try await command.nextLine() }
            let maps = try String(contentsOfFile: "/proc/\(command.execution.processIdentifier.value)/maps", encoding: .utf8)
            try command.send(.terminate)
            return Self.arenaHeaps(maps: maps)
        }
        return heaps
    }

    /// Anonymous mappings that start on a 64 MiB boundary and, with the anonymous mappings right
    /// after them, cover exactly 64 MiB: glibc's heaps for arenas past the first (HEAP_MAX_SIZE).
    static func arenaHeaps(maps: String) -> Int {
        let size: UInt = 64 << 20
        let anonymous: [(start: UInt, end: UInt)] = maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let bounds = fields.first?.split(separator: "-") ?? []
            guard fields.count == 5, bounds.count == 2, let start = UInt(bounds[0], radix: 16),
                let end = UInt(bounds[1], radix: 16)
            else { return nil }
            return (start, end)
        }
        return anonymous.indices.filter { index in
            guard anonymous[index].start % size == 0 else { return false }
            var end = anonymous[index].end
            var next = index + 1
            while end < anonymous[index].start + size, next < anonymous.count, anonymous[next].start == end {
                end = anonymous[next].end
                next += 1
            }
            return end == anonymous[index].start + size
        }.count
    }
}
