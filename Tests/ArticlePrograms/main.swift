// Runs one of the articles' complete programs as printed (Programs.swift, generated from the
// blocks marked `<!-- program: NAME -->`): `article-programs NAME`. The docs' tests run each in
// the setting it needs, such as a network namespace with gpsd and a broker on their usual ports.
import Glibc

let name = CommandLine.arguments.dropFirst().first ?? ""
guard let program = articlePrograms[name] else {
    let usage = "usage: article-programs NAME, one of: \(articlePrograms.keys.sorted().joined(separator: ", "))\n"
    _ = usage.withCString { write(2, $0, strlen($0)) }
    exit(2)
}
try await program()
