import Foundation
import Testing

/// The DocC articles' Swift snippets, as the Swift files in `Generated/` that this target
/// compiles: a snippet that stops compiling fails the build, and an article changed without
/// its file fails ``ArticleSnippetTests``.
///
/// Each ```` ```swift ```` block becomes a `@MainActor` function of its own (top-level code in a
/// program is main-actor code too), its `import` lines gathered at the top of the article's
/// file. A block whose first line is `// Package.swift` is a manifest and is resolved as printed
/// instead. Every other block is run as a test (after `<!-- test: NAME -->`) or marked a fragment
/// (`<!-- fragment: WHY -->`): ``ArticleSnippetTests/everySwiftBlockIsRunOrMarkedAFragment()``.
enum ArticleSnippets {
    /// The articles' folder.
    static let articles = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/LocationKeepAlive/LocationKeepAlive.docc")

    /// Where the compiled files are.
    static let generated = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Generated")

    /// The package's README, whose snippet is held to the same rule.
    static let readme = articles.deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// Every article with a Swift snippet, by file name without `.md`, and the README.
    static func articleNames() throws -> [String] {
        try (FileManager.default.contentsOfDirectory(atPath: articles.path).filter { $0.hasSuffix(".md") } + ["README.md"])
            .map { String($0.dropLast(3)) }
            .filter { try !blocks(in: markdown(of: $0)).isEmpty }
            .sorted()
    }

    static func markdown(of article: String) throws -> String {
        let file = article == "README" ? readme : articles.appendingPathComponent(article + ".md")
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// The lines of each Swift block, in order.
    static func blocks(in markdown: String) -> [[String]] { markedBlocks(in: markdown).map(\.lines) }

    /// What the HTML comment on the line before a Swift block says of it (DocC shows nothing of
    /// it): `<!-- test: NAME -->`, the block is also run as the test `NAME` in the test command;
    /// `<!-- fragment: WHY -->`, it is only compiled, and `WHY` says why the tests do not run it
    /// (a part of a program, or one that runs until stopped on the reader's own receiver).
    enum Mark: Equatable {
        case test(String)
        case fragment(String)

        init?(comment: String) {
            guard comment.hasPrefix("<!-- "), comment.hasSuffix(" -->") else { return nil }
            let text = comment.dropFirst("<!-- ".count).dropLast(" -->".count)
            if text.hasPrefix("test: ") {
                self = .test(String(text.dropFirst("test: ".count)))
            } else if text.hasPrefix("fragment: ") {
                self = .fragment(String(text.dropFirst("fragment: ".count)))
            } else {
                return nil
            }
        }
    }

    /// Each Swift block with its mark, if any (a manifest, `// Package.swift` on its first line,
    /// is not among them: see ``manifests(in:)``).
    static func markedBlocks(in markdown: String) -> [(lines: [String], mark: Mark?)] {
        allBlocks(in: markdown).filter { $0.lines.first?.hasPrefix("// Package.swift") != true }
    }

    /// The manifests among the Swift blocks, their first line (`// Package.swift ...`) left out.
    static func manifests(in markdown: String) -> [[String]] {
        allBlocks(in: markdown).map(\.lines).filter { $0.first?.hasPrefix("// Package.swift") == true }.map { Array($0.dropFirst()) }
    }

    private static func allBlocks(in markdown: String) -> [(lines: [String], mark: Mark?)] {
        var blocks: [(lines: [String], mark: Mark?)] = []
        var current: [String]?
        var previous = ""
        var mark: Mark?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if trimmed == "```swift" {
                    current = []
                    mark = Mark(comment: previous)
                }
                previous = trimmed
            } else if trimmed == "```" {
                blocks.append((current!, mark))
                current = nil
                previous = ""
            } else {
                current!.append(line)
            }
        }
        return blocks
    }

    /// The Swift file that compiles `article`'s snippets.
    static func source(of article: String, markdown: String) -> String {
        var imports: [String] = []
        var functions: [String] = []
        let prefix = article == "README" ? "readme" : article.prefix(1).lowercased() + article.dropFirst()
        for (index, (block, mark)) in markedBlocks(in: markdown).enumerated() {
            var body: [String] = []
            for line in block {
                if line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                    if !imports.contains(line) { imports.append(line) }
                } else {
                    body.append(line)
                }
            }
            while body.first?.isEmpty == true { body.removeFirst() }
            let indented = body.map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
            functions.append("@MainActor func \(prefix)Snippet\(index + 1)() async throws {\n\(indented)\n}\n")
            if case .test(let test) = mark {
                if !imports.contains("import Testing") { imports.append("import Testing") }
                functions.append(
                    "@Test(.timeLimit(.minutes(5))) @MainActor func \(test)() async throws {\n    try await \(prefix)Snippet\(index + 1)()\n}\n"
                )
            }
        }
        return """
            // The Swift snippets of \(article).md, compiled: generated, do not edit. After changing the
            // article: scripts/update-snippets

            \(imports.joined(separator: "\n"))

            \(functions.joined(separator: "\n"))
            """
    }
}

@Suite struct ArticleSnippetTests {
    @Test func everyArticleWithSnippetsIsCompiled() throws {
        let articles = try ArticleSnippets.articleNames()
        #expect(articles.count >= 4, "the articles' folder is found: \(ArticleSnippets.articles.path)")
        let update = ProcessInfo.processInfo.environment["UPDATE_SNIPPETS"] == "1"
        for article in articles {
            let expected = ArticleSnippets.source(of: article, markdown: try ArticleSnippets.markdown(of: article))
            let file = ArticleSnippets.generated.appendingPathComponent(article + ".swift")
            let compiled = try? String(contentsOf: file, encoding: .utf8)
            guard compiled != expected else { continue }
            if update {
                try expected.write(to: file, atomically: true, encoding: .utf8)
            } else {
                let fix = "scripts/update-snippets"
                Issue.record("\(article).md's snippets changed since Generated/\(article).swift was written: run \(fix)")
            }
        }
        let stale = try FileManager.default.contentsOfDirectory(atPath: ArticleSnippets.generated.path)
            .filter { !articles.contains(String($0.dropLast(".swift".count))) }
        for file in stale {
            if update {
                try FileManager.default.removeItem(at: ArticleSnippets.generated.appendingPathComponent(file))
            } else {
                Issue.record("Generated/\(file) has no article with snippets: run scripts/update-snippets")
            }
        }
    }

    /// The docs' code runs as printed: every Swift block of the README and the articles is a
    /// test, or says why it is only compiled. A block left unmarked fails here, naming it.
    @Test func everySwiftBlockIsRunOrMarkedAFragment() throws {
        var tests = 0
        for article in try ArticleSnippets.articleNames() {
            for (index, (lines, mark)) in ArticleSnippets.markedBlocks(in: try ArticleSnippets.markdown(of: article)).enumerated() {
                let first = lines.first { !$0.isEmpty && !$0.hasPrefix("import ") } ?? ""
                switch mark {
                case .test: tests += 1
                case .fragment(let why):
                    #expect(why.count >= 10, "\(article).md, Swift block \(index + 1): a fragment says why it is not run")
                case nil:
                    let fix = "put <!-- test: NAME --> or <!-- fragment: WHY --> on the line before it, then run scripts/update-snippets"
                    Issue.record("\(article).md, Swift block \(index + 1) (\(first)) is neither run nor marked: \(fix)")
                }
            }
        }
        #expect(tests >= 10, "the articles' complete blocks run: \(tests)")
    }

    /// The manifest of "Getting started", as printed, resolves for a tracker beside a clone named
    /// as the article says (a link to this repository here): `swift package describe` loads the
    /// whole graph, products and their packages' identities included, without building it.
    @Test(.timeLimit(.minutes(5))) func theManifestResolvesAsPrinted() async throws {
        let manifests = ArticleSnippets.manifests(in: try ArticleSnippets.markdown(of: "GettingStarted"))
        let manifest = try #require(manifests.first, "Getting started prints a manifest")
        let root = ArticleSnippets.readme.deletingLastPathComponent()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tracker = folder.appendingPathComponent("Tracker")
        for path in ["Sources/Tracker", "Tests/TrackerTests"] {
            try FileManager.default.createDirectory(at: tracker.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("LocationKeepAlive"), withDestinationURL: root)
        try ("// swift-tools-version: 6.1\n" + manifest.joined(separator: "\n") + "\n")
            .write(to: tracker.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "print(1)\n".write(to: tracker.appendingPathComponent("Sources/Tracker/main.swift"), atomically: true, encoding: .utf8)
        try "import Testing\n".write(to: tracker.appendingPathComponent("Tests/TrackerTests/Tests.swift"), atomically: true, encoding: .utf8)

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
        // Polled: a blocking read or `waitUntilExit()` would hold one of the few threads every
        // test's tasks share (waitUntilExit deadlocked both here: PLATFORM-NOTES.md).
        while describe.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        let text = try String(contentsOf: printed, encoding: .utf8)
        #expect(describe.terminationStatus == 0, "the manifest as printed: \(text.suffix(2_000))")
        #expect(text.contains("\"name\" : \"Tracker\""), "swift package describe printed the tracker's package")
    }

    @Test func aBlockBecomesAFunctionAndItsImportsGoToTheTop() {
        let markdown = """
            Text.

            ```swift
            import LocationKeepAlive

            let manager = LocationManager(source: GPSDSource())
            ```

            ```swift
            // Package.swift
            .package(url: "https://example.com/x", from: "1.0.0"),
            ```

            ```bash
            keepalive watch
            ```
            """
        let marks = ArticleSnippets.markedBlocks(in: "<!-- fragment: part of a program -->\n```swift\nx()\n```\n\n```swift\ny()\n```\n")
        #expect(marks.map(\.mark) == [.fragment("part of a program"), nil])
        #expect(ArticleSnippets.manifests(in: markdown) == [[".package(url: \"https://example.com/x\", from: \"1.0.0\"),"]])
        let tested = ArticleSnippets.source(of: "Example", markdown: "<!-- test: itRuns -->\n```swift\nprint(1)\n```\n")
        #expect(tested.contains("import Testing"))
        #expect(tested.contains("@Test(.timeLimit(.minutes(5))) @MainActor func itRuns() async throws {\n    try await exampleSnippet1()\n}"))
        let source = ArticleSnippets.source(of: "Example", markdown: markdown)
        #expect(source.contains("\nimport LocationKeepAlive\n"))
        #expect(source.contains("@MainActor func exampleSnippet1() async throws {\n    let manager = LocationManager(source: GPSDSource())\n}"))
        #expect(!source.contains(".package(") && !source.contains("keepalive watch") && !source.contains("Snippet2"))
    }
}

