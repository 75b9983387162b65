import ArgumentParser

@main
struct KeepAlive: AsyncParsableCommand {
    func run() async throws {}
}
