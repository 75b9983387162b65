import KeepAliveCore
import KeepAliveDelivery
import KeepAliveJournal

/// What runs beside the `keepalive run` service for its journal: the writer's timed commits
/// and, with destinations, the delivery. Paused while the app is suspended and finished at a
/// stop the same way: the writer commits what it holds (nothing waits in memory through a
/// freeze or past the process), the delivery sends what waits within the bound it is given,
/// the writer commits where each destination stands, and what is left undelivered is said.
struct JournalWork: PausableWork {
    let writer: JournalWriter
    let delivery: JournalDelivery?
    /// Told what a stop or a pause left undelivered, by destination, how long it took, the bound and whether pausing.
    let undelivered: @Sendable ([(name: String, count: Int)], Duration, Duration, Bool) -> Void

    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await writer.run() }
            if let delivery { group.addTask { await delivery.run() } }
        }
    }

    func pause() async {
        await pause(within: .zero)
    }

    func pause(within bound: Duration) async {
        await deliver(within: bound, pausing: true)
        await delivery?.pause()
    }

    func finish(within bound: Duration) async {
        await deliver(within: bound, pausing: false)
    }

    func resume() {
        writer.resume()
        delivery?.resume()
    }

    /// Commits, sends what waits within `bound`, commits where the destinations stand, says what is left.
    private func deliver(within bound: Duration, pausing: Bool) async {
        await writer.commit()
        guard let delivery else { return }
        let started = ContinuousClock.now
        if bound > .zero { await delivery.drain(within: bound) }
        await writer.commit()
        let took = started.duration(to: .now)
        var left: [(name: String, count: Int)] = []
        for deliverer in delivery.deliverers {
            left.append((name: deliverer.destination, count: (try? await writer.waiting(for: deliverer.destination)) ?? 0))
        }
        undelivered(left, took, bound, pausing)
    }
}
