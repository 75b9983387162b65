import Foundation
import Testing
import IntegrationSupport

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
        let programs = ArticleSnippets.programsSource(of: try articles.map { ($0, try ArticleSnippets.markdown(of: $0)) })
        if (try? String(contentsOf: ArticleSnippets.programsFile, encoding: .utf8)) != programs {
            if update {
                try programs.write(to: ArticleSnippets.programsFile, atomically: true, encoding: .utf8)
            } else {
                Issue.record("the articles' programs changed since ArticlePrograms/Programs.swift was written: run scripts/update-snippets")
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
                case .test, .program: tests += 1
                case .fragment(let why):
                    #expect(why.count >= 10, "\(article).md, Swift block \(index + 1): a fragment says why it is not run")
                case nil:
                    let fix = "put <!-- test: NAME -->, <!-- program: NAME --> or <!-- fragment: WHY --> on the line before it, then run scripts/update-snippets"
                    Issue.record("\(article).md, Swift block \(index + 1) (\(first)) is neither run nor marked: \(fix)")
                }
            }
        }
        #expect(tests >= 10, "the articles' complete blocks run: \(tests)")
    }
    @Test func aBlockBecomesAFunctionAndItsImportsGoToTheTop() {
        let markdown = """
            Text.

            ```swift
            import LocationKeepAlive

            let manager = LocationManager(source: GPSDSource())
            ```

            ```swift
            // swift-tools-version: 6.1
            .package(url: "https://example.com/x", from: "1.0.0"),
            ```

            ```bash
            keepalive watch
            ```
            """
        let marks = ArticleSnippets.markedBlocks(in: "<!-- fragment: part of a program -->\n```swift\nx()\n```\n\n```swift\ny()\n```\n")
        #expect(marks.map(\.mark) == [.fragment("part of a program"), nil])
        #expect(ArticleSnippets.manifests(in: markdown) == [["// swift-tools-version: 6.1", ".package(url: \"https://example.com/x\", from: \"1.0.0\"),"]])
        let tested = ArticleSnippets.source(of: "Example", markdown: "<!-- test: itRuns -->\n```swift\nprint(1)\n```\n")
        #expect(tested.contains("import Testing"))
        #expect(tested.contains("@Test(.timeLimit(.minutes(5))) @MainActor func itRuns() async throws {\n    try await exampleSnippet1()\n}"))
        let source = ArticleSnippets.source(of: "Example", markdown: markdown)
        #expect(source.contains("\nimport LocationKeepAlive\n"))
        #expect(source.contains("@MainActor func exampleSnippet1() async throws {\n    let manager = LocationManager(source: GPSDSource())\n}"))
        #expect(!source.contains(".package(") && !source.contains("keepalive watch") && !source.contains("Snippet2"))
        let program = "<!-- program: a-tracker -->\n```swift\nimport LocationKeepAlive\n\nprint(2)\n```\n"
        #expect(!ArticleSnippets.source(of: "Example", markdown: program).contains("print(2)"), "a program is compiled once, as a program")
        let programs = ArticleSnippets.programsSource(of: [("Example", program)])
        #expect(programs.contains("import LocationKeepAlive\n"))
        #expect(programs.contains("@MainActor func aTracker() async throws {\n    print(2)\n}"))
        #expect(programs.contains("    \"a-tracker\": aTracker,"))
    }
}

