package import Foundation
import Testing

/// The DocC articles' Swift snippets, as the Swift files in `Generated/` that this target
/// compiles: a snippet that stops compiling fails the build, and an article changed without
/// its file fails ``ArticleSnippetTests``.
///
/// Each ```` ```swift ```` block becomes a `@MainActor` function of its own (top-level code in a
/// program is main-actor code too), its `import` lines gathered at the top of the article's
/// file. A block whose first line is `// swift-tools-version:` is a manifest and is resolved as
/// printed instead. Every other block is run as a test (after `<!-- test: NAME -->`) or marked a fragment
/// (`<!-- fragment: WHY -->`): ``ArticleSnippetTests/everySwiftBlockIsRunOrMarkedAFragment()``.
package enum ArticleSnippets {
    /// The articles' folder.
    package static let articles = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/LocationKeepAlive/LocationKeepAlive.docc")

    /// Where the compiled files are.
    package static let generated = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ArticleSnippetTests/Generated")

    /// The package's README, whose snippet is held to the same rule.
    package static let readme = articles.deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// Every article with a Swift snippet, by file name without `.md`, and the README.
    package static func articleNames() throws -> [String] {
        try (FileManager.default.contentsOfDirectory(atPath: articles.path).filter { $0.hasSuffix(".md") } + ["README.md"])
            .map { String($0.dropLast(3)) }
            .filter { try !blocks(in: markdown(of: $0)).isEmpty }
            .sorted()
    }

    package static func markdown(of article: String) throws -> String {
        let file = article == "README" ? readme : articles.appendingPathComponent(article + ".md")
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// The lines of each Swift block, in order.
    package static func blocks(in markdown: String) -> [[String]] { markedBlocks(in: markdown).map(\.lines) }

    /// What the HTML comment on the line before a Swift block says of it (DocC shows nothing of
    /// it): `<!-- test: NAME -->`, the block is also run as the test `NAME` in the test command;
    /// `<!-- program: NAME -->`, it is also the program `NAME` of `article-programs` (a process
    /// of its own, run by a docs test in the setting it needs: signals, gpsd and a broker on
    /// their usual ports); `<!-- fragment: WHY -->`, it is only compiled, and `WHY` says why the
    /// tests do not run it (a part of a program, or one that runs on the reader's own receiver).
    package enum Mark: Equatable {
        case test(String)
        case program(String)
        case fragment(String)

        package init?(comment: String) {
            guard comment.hasPrefix("<!-- "), comment.hasSuffix(" -->") else { return nil }
            let text = comment.dropFirst("<!-- ".count).dropLast(" -->".count)
            for (label, mark) in [("test: ", Mark.test), ("program: ", Mark.program), ("fragment: ", Mark.fragment)]
            where text.hasPrefix(label) {
                self = mark(String(text.dropFirst(label.count)))
                return
            }
            return nil
        }
    }

    /// Where the articles' programs are compiled: the `article-programs` tool's sources.
    package static let programsFile = generated.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ArticlePrograms/Programs.swift")

    /// The Swift file that compiles every block marked `<!-- program: NAME -->`, each as a
    /// main-actor function, and names them for `article-programs NAME`.
    package static func programsSource(of articles: [(name: String, markdown: String)]) -> String {
        var imports: [String] = []
        var functions: [String] = []
        var table: [String] = []
        for (article, markdown) in articles {
            for (block, mark) in markedBlocks(in: markdown) {
                guard case .program(let name) = mark else { continue }
                let (blockImports, body) = split(block)
                for line in blockImports where !imports.contains(line) { imports.append(line) }
                let function = name.split(separator: "-").enumerated()
                    .map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
                functions.append("/// \(article).md\n@MainActor func \(function)() async throws {\n\(body)\n}\n")
                table.append("    \"\(name)\": \(function),")
            }
        }
        return """
            // The articles' complete programs (`<!-- program: NAME -->`), as printed: generated, do
            // not edit. After changing an article: scripts/update-snippets

            \(imports.joined(separator: "\n"))

            \(functions.joined(separator: "\n"))
            /// Each program by its name in the article.
            let articlePrograms: [String: @MainActor () async throws -> Void] = [
            \(table.joined(separator: "\n"))
            ]

            """
    }

    /// A block's `import` lines, and the rest indented as a function's body.
    private static func split(_ block: [String]) -> (imports: [String], body: String) {
        var imports: [String] = []
        var body: [String] = []
        for line in block {
            if line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                imports.append(line)
            } else {
                body.append(line)
            }
        }
        while body.first?.isEmpty == true { body.removeFirst() }
        return (imports, body.map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n"))
    }

    /// Each Swift block with its mark, if any (a manifest, `// swift-tools-version:` on its first
    /// line, is not among them: see ``manifests(in:)``).
    package static func markedBlocks(in markdown: String) -> [(lines: [String], mark: Mark?)] {
        allBlocks(in: markdown).filter { !isManifest($0.lines) }
    }

    /// The manifests among the Swift blocks, whole: a `Package.swift` as printed.
    package static func manifests(in markdown: String) -> [[String]] {
        allBlocks(in: markdown).map(\.lines).filter(isManifest)
    }

    /// A manifest starts with SwiftPM's tools version, as a `Package.swift` must.
    private static func isManifest(_ lines: [String]) -> Bool {
        lines.first?.hasPrefix("// swift-tools-version:") == true
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

    /// The Swift file that compiles `article`'s snippets (its programs are in ``programsSource(of:)``'s).
    package static func source(of article: String, markdown: String) -> String {
        var imports: [String] = []
        var functions: [String] = []
        let prefix = article == "README" ? "readme" : article.prefix(1).lowercased() + article.dropFirst()
        for (index, (block, mark)) in markedBlocks(in: markdown).enumerated() {
            if case .program = mark { continue }  // compiled once, in the programs' file
            let (blockImports, indented) = split(block)
            for line in blockImports where !imports.contains(line) { imports.append(line) }
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
