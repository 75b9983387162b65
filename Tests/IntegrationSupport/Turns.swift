/// At most `limit` bodies at a time; the others wait their turn, in order.
///
/// For test cases that run in parallel and each start processes whose timing matters (a gated
/// gpsd and two `keepalive` commands a log): seventeen at once on a loaded 2-core machine took
/// more than gpsd's 10 s of silence to start, and a watch reconnected while the feed began.
package actor Turns {
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(_ limit: Int) { self.limit = limit }

    /// Runs `body` once fewer than `limit` others are running.
    package nonisolated func take<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        await enter()
        do {
            let result = try await body()
            await leave()
            return result
        } catch {
            await leave()
            throw error
        }
    }

    private func enter() async {
        if running < limit {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the turn to the first waiting body, if any (the count stays).
    private func leave() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
