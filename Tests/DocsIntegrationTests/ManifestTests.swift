import Foundation
import Testing
import IntegrationSupport

/// The docs' manifest, resolved as printed: alone in its target, for the docs step (`swift package
/// describe` compiles every dependency's manifest, a burst of CPU the timed suites do without).
@Suite struct ManifestTests {
    /// The manifest of "Getting started", as printed, resolves for a tracker beside a clone named
    /// as the article says (a link to this repository here), and for one beside a clone named
    /// otherwise with only its `path:` changed, as the article says: `swift package describe`
    /// loads the whole graph, products and their packages' names included, without building it.
    /// Only the folders the article says to make are made (a test target whose folder it never
    /// made failed so for a newcomer); "Testing with mocks"'s manifest, with its test target,
    /// resolves with the test folder it says to make. `scripts/check-newcomer` builds the first.
    @Test(.timeLimit(.minutes(5))) func theManifestResolvesAsPrinted() async throws {
        let manifests = ArticleSnippets.manifests(in: try ArticleSnippets.markdown(of: "GettingStarted"))
        let printed = try #require(manifests.first, "Getting started prints a manifest").joined(separator: "\n") + "\n"
        #expect(printed.hasPrefix("// swift-tools-version: 6.1\n"), "a manifest's first line is its tools version")
        try await resolve(printed, besideAClone: "LocationKeepAlive")
        let path = #"path: "../LocationKeepAlive")"#
        #expect(printed.contains(path), "the printed manifest depends on ../LocationKeepAlive")
        try await resolve(printed.replacingOccurrences(of: path, with: #"path: "../location-keep-alive")"#), besideAClone: "location-keep-alive")
        let testing = ArticleSnippets.manifests(in: try ArticleSnippets.markdown(of: "TestingWithMocks"))
        let withTests = try #require(testing.first, "Testing with mocks prints a manifest").joined(separator: "\n") + "\n"
        #expect(withTests.contains("testTarget"), "its manifest has the test target")
        try await resolve(withTests, besideAClone: "LocationKeepAlive", testFolder: true)
    }

    private func resolve(_ manifest: String, besideAClone clone: String, testFolder: Bool = false) async throws {
        let root = ArticleSnippets.readme.deletingLastPathComponent()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tracker = folder.appendingPathComponent("Tracker")
        for path in ["Sources/Tracker"] + (testFolder ? ["Tests/TrackerTests"] : []) {
            try FileManager.default.createDirectory(at: tracker.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent(clone), withDestinationURL: root)
        try manifest.write(to: tracker.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "print(1)\n".write(to: tracker.appendingPathComponent("Sources/Tracker/main.swift"), atomically: true, encoding: .utf8)
        if testFolder {
            try "import Testing\n".write(to: tracker.appendingPathComponent("Tests/TrackerTests/Tests.swift"), atomically: true, encoding: .utf8)
        }

        let describe = Process()
        describe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        describe.arguments = ["swift", "package", "--package-path", tracker.path, "describe", "--type", "json"]
        let printed = tracker.appendingPathComponent("describe.txt")
        _ = FileManager.default.createFile(atPath: printed.path, contents: nil)
        let output = try FileHandle(forWritingTo: printed)
        describe.standardOutput = output
        describe.standardError = output
        try describe.run()
        defer { if describe.isRunning { describe.terminate() } }
        // Never a blocking read or `waitUntilExit()`, which would hold one of the few threads
        // every test's tasks share (waitUntilExit deadlocked both here: PLATFORM-NOTES.md).
        try #require(await describe.ended(within: .seconds(900)), "swift package describe did not end within 15 minutes")
        let text = try String(contentsOf: printed, encoding: .utf8)
        #expect(describe.terminationStatus == 0, "the manifest as printed, beside \(clone): \(text.suffix(2_000))")
        #expect(text.contains("\"name\" : \"Tracker\""), "swift package describe printed the tracker's package")
    }
}
