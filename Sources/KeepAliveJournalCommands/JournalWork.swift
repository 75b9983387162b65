import KeepAliveCore
import KeepAliveDelivery
import KeepAliveJournal

/// What runs beside the `keepalive run` service for its journal: the writer's timed commits
/// and, with destinations, the delivery. Paused while the app is suspended: the writer commits
/// what it holds (nothing waits in memory through a freeze), the delivery lets its lease go.
struct JournalWork: PausableWork {
    let writer: JournalWriter
    let delivery: JournalDelivery?

    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await writer.run() }
            if let delivery { group.addTask { await delivery.run() } }
        }
    }

    func pause() async {
        await writer.pause()
        await delivery?.pause()
    }

    func resume() {
        writer.resume()
        delivery?.resume()
    }
}
