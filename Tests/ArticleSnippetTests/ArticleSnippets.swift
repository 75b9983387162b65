import Foundation
import Testing

/// The DocC articles' Swift snippets, as the Swift files in `Generated/` that this target
/// compiles: a snippet that stops compiling fails the build, and an article changed without
/// its file fails ``ArticleSnippetTests``.
///
/// Each ```` ```swift ```` block becomes a `@MainActor` function of its own (top-level code in a
/// program is main-actor code too), its `import` lines gathered at the top of the article's
/// file. A block whose first line is `// Package.swift` is a manifest and is not compiled here.
/// A block after `<!-- test: NAME -->` is also run, as the test `NAME`.
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

    /// Each Swift block with the test it is run as, if any: an HTML comment `<!-- test: NAME -->`
    /// on the line before the block (DocC shows nothing of it) makes the block a test of that
    /// name too, run in the test command; the others are only compiled.
    static func markedBlocks(in markdown: String) -> [(lines: [String], test: String?)] {
        var blocks: [(lines: [String], test: String?)] = []
        var current: [String]?
        var previous = ""
        var test: String?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if trimmed == "```swift" {
                    current = []
                    test = previous.hasPrefix("<!-- test: ") && previous.hasSuffix(" -->")
                        ? String(previous.dropFirst("<!-- test: ".count).dropLast(" -->".count)) : nil
                }
                previous = trimmed
            } else if trimmed == "```" {
                blocks.append((current!, test))
                current = nil
                previous = ""
            } else {
                current!.append(line)
            }
        }
        return blocks.filter { $0.lines.first?.hasPrefix("// Package.swift") != true }
    }

    /// The Swift file that compiles `article`'s snippets.
    static func source(of article: String, markdown: String) -> String {
        var imports: [String] = []
        var functions: [String] = []
        let prefix = article == "README" ? "readme" : article.prefix(1).lowercased() + article.dropFirst()
        for (index, (block, test)) in markedBlocks(in: markdown).enumerated() {
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
            if let test {
                if !imports.contains("import Testing") { imports.append("import Testing") }
                functions.append(
                    "@Test(.timeLimit(.minutes(1))) @MainActor func \(test)() async throws {\n    try await \(prefix)Snippet\(index + 1)()\n}\n"
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
        let tested = ArticleSnippets.source(of: "Example", markdown: "<!-- test: itRuns -->\n```swift\nprint(1)\n```\n")
        #expect(tested.contains("import Testing"))
        #expect(tested.contains("@Test(.timeLimit(.minutes(1))) @MainActor func itRuns() async throws {\n    try await exampleSnippet1()\n}"))
        let source = ArticleSnippets.source(of: "Example", markdown: markdown)
        #expect(source.contains("\nimport LocationKeepAlive\n"))
        #expect(source.contains("@MainActor func exampleSnippet1() async throws {\n    let manager = LocationManager(source: GPSDSource())\n}"))
        #expect(!source.contains(".package(") && !source.contains("keepalive watch") && !source.contains("Snippet2"))
    }
}

