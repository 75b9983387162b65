/// One sleep's preparation, which a resume may cut short: its body cancelled, its end awaited,
/// so that nothing it does (delivery's pause after its drain) lands after the resume.
final class SleepPreparation: Sendable {
    private let (cutSignal, cutting) = AsyncStream<Void>.makeStream()
    private let (ended, ending) = AsyncStream<Void>.makeStream()

    /// Runs `body` until it returns or ``cut()`` cancels it.
    func run(_ body: @escaping @Sendable () async -> Void) async {
        let cutSignal = cutSignal
        await withTaskGroup(of: Void.self) { race in
            race.addTask { await body() }
            race.addTask { for await _ in cutSignal { break } }
            await race.next()
            race.cancelAll()
        }
        ending.finish()
    }

    /// Cancels the body if it still runs, and returns once it has ended.
    func cut() async {
        cutting.finish()
        for await _ in ended {}
    }
}
