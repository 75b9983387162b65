import Glibc
import SystemPackage
import UnixSignals

/// SIGINT and SIGTERM, trapped so that a program stops cleanly, as `keepalive run` does: the
/// first asks for a stop (``stopRequested()``), and a second ends the process at once (status
/// 130), whatever the first is still waiting for.
///
/// Trap them before the program opens anything, so that a signal that comes during its start
/// is kept: before ``trap()`` returns, a signal has its default effect (the process ends).
/// ``release()`` gives both their earlier effect back.
public final class InterruptSignals: Sendable {
    private let requests: AsyncStream<Void>
    private let requested: Locked<Bool>
    private let watcher: Task<Void, Never>
    private let earlier: [Int32: SavedAction]

    /// Whether SIGINT or SIGTERM came: a stop asked for.
    public var wasRequested: Bool { requested.withLock { $0 } }

    private init(requests: AsyncStream<Void>, requested: Locked<Bool>, watcher: Task<Void, Never>, earlier: [Int32: SavedAction]) {
        self.requests = requests
        self.requested = requested
        self.watcher = watcher
        self.earlier = earlier
    }

    /// Traps both signals; they are trapped once this returns.
    public static func trap() async -> InterruptSignals {
        let earlier = Dictionary(uniqueKeysWithValues: [SIGINT, SIGTERM].map { ($0, SavedAction(of: $0)) })
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let (requests, request) = AsyncStream.makeStream(of: Void.self)
        let requested = Locked(false)
        // Unstructured: it lives as long as the trap, beyond the task that set it, and ends at
        // release().
        let watcher = Task.detached {
            var seen = 0
            for await _ in signals {
                seen += 1
                requested.withLock { $0 = true }
                if seen == 1 {
                    request.yield()
                    request.finish()
                } else {
                    let program = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
                    _ = try? FileDescriptor.standardError.writeAll(Array("\(program): interrupted again, exiting now\n".utf8))
                    exit(130)
                }
            }
        }
        return InterruptSignals(requests: requests, requested: requested, watcher: watcher, earlier: earlier)
    }

    /// Waits for the stop request (returns at once if it came already): `true`, or `false` if
    /// the task was cancelled first. One task waits.
    public func stopRequested() async -> Bool {
        for await _ in requests { return true }
        return wasRequested
    }

    /// Gives SIGINT and SIGTERM the effect they had before ``trap()`` (by default, ending the
    /// process), and stops watching them.
    public func release() {
        for (signal, action) in earlier { action.restore(signal) }
        watcher.cancel()
    }
}

/// A signal's disposition, as `sigaction` read it.
private struct SavedAction: @unchecked Sendable {
    // Unchecked: a C struct holding the handler's pointer, copied once and only read after.
    private var action = sigaction()

    init(of signal: Int32) { sigaction(signal, nil, &action) }

    func restore(_ signal: Int32) {
        var action = action
        sigaction(signal, &action, nil)
    }
}

/// What ends a program's work besides its own end (`JournalDelivery.run(until:stopTimeout:_:)`,
/// the journal's delivery): SIGINT or SIGTERM, or a request of your own.
public struct StopRequest: Sendable {
    package let arm: @Sendable () async -> Armed

    /// A stop request in force: waited for beside the work, then disarmed.
    package struct Armed: Sendable {
        /// Returns `true` when the stop is asked, `false` if cancelled first.
        package let requested: @Sendable () async -> Bool
        package let disarm: @Sendable () -> Void
        /// What a user can still do once the stop was asked, for its message (`""`: nothing).
        package var stillStoppable = ""
    }

    /// SIGINT or SIGTERM (Ctrl-C, `kill`, systemd's stop), trapped for the run with
    /// ``InterruptSignals``: the first stops the work, a second exits at once (status 130).
    public static var interrupt: StopRequest {
        StopRequest {
            let signals = await InterruptSignals.trap()
            return Armed(
                requested: { await signals.stopRequested() },
                disarm: { signals.release() },
                stillStoppable: "; interrupt again to exit now"
            )
        }
    }

    /// None: only the work's own end stops it.
    public static var never: StopRequest {
        StopRequest {
            Armed(
                requested: {
                    for await _ in AsyncStream<Void>(Void.self, { _ in }) {}  // until cancelled
                    return false
                },
                disarm: {}
            )
        }
    }

    /// When `requested` returns (a stop of your own: a command, a deadline, a test).
    public static func when(_ requested: @escaping @Sendable () async -> Void) -> StopRequest {
        StopRequest {
            Armed(
                requested: {
                    await requested()
                    return !Task.isCancelled
                },
                disarm: {}
            )
        }
    }
}
