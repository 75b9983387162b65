public import FoundationEssentials
public import Logging

/// Reports from gpsd through libgps, with reconnection.
///
/// The first connection must succeed, or the stream ends with ``LocationError/Code/gpsdUnreachable``
/// at once, unless ``waitsForGPSD`` (a tracker started at boot before gpsd, as Android and
/// CoreLocation wait for their provider). After that, a broken or silent connection is reported
/// as ``LocationStatus/connectionLost(_:)`` and retried with a capped exponential backoff,
/// forever, until the consumer stops.
public struct GPSDSource: LocationSource {
    /// gpsd's host name or address.
    public var host: String
    /// gpsd's port (2947 by default).
    public var port: Int
    /// The backoff between reconnection attempts.
    public var reconnectPolicy: ReconnectPolicy
    /// A connection that sends nothing for this long is treated as lost (a hung gpsd sends no event).
    public var silenceTimeout: Duration
    /// A connection attempt that has not completed in this long fails (an unreachable remote host).
    public var connectTimeout: Duration
    /// Whether a gpsd not there at the start is waited for, as a lost connection is
    /// (``LocationStatus/connectionLost(_:)``, then ``LocationStatus/reconnecting(attempt:delay:)``
    /// with ``reconnectPolicy``'s backoff), instead of ending the stream with `gpsdUnreachable`.
    public var waitsForGPSD: Bool
    private let time: TimeSource
    private let logger: Logger
    private let receiverClock = ReceiverClock()

    /// A source for gpsd at `host`:`port`.
    ///
    /// - Parameters:
    ///   - host: gpsd's host name or address.
    ///   - port: gpsd's port.
    ///   - reconnectPolicy: the backoff between reconnection attempts.
    ///   - silenceTimeout: a connection silent this long is treated as lost.
    ///   - connectTimeout: a connection attempt not done by then fails.
    ///   - waitsForGPSD: wait for a gpsd not there at the start (``waitsForGPSD``).
    ///   - clock: times the backoff and the silence timeout.
    ///   - logger: where connection losses and retries are logged.
    public init(
        host: String = "localhost",
        port: Int = 2947,
        reconnectPolicy: ReconnectPolicy = .init(),
        silenceTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(5),
        waitsForGPSD: Bool = false,
        clock: some Clock<Duration> = DispatchClock(),
        logger: Logger = Logger(label: "LocationKeepAlive.gpsd")
    ) {
        self.host = host
        self.port = port
        self.reconnectPolicy = reconnectPolicy
        self.silenceTimeout = silenceTimeout
        self.connectTimeout = connectTimeout
        self.waitsForGPSD = waitsForGPSD
        self.time = TimeSource(clock)
        self.logger = logger
    }

    /// The receiver's clock: the last fix time gpsd reported, moved on by the monotonic time
    /// since it came (`nil` before the first fix with a time), whatever year the receiver says.
    /// Fix ages are measured on it, as on a replay's clock (the rule is written once, at
    /// ``LocationSource/currentDate``), not on the system clock, which a board without a
    /// real-time clock may have wrong by a year: a fresh fix is then fresh, and a cached one as
    /// old as it is.
    public var currentDate: Date? { receiverClock.date(at: time.now()) }

    /// Yes: gpsd closes the device 60 s after its last watcher goes.
    public var restsWhenUnwatched: Bool { true }

    /// The events of a session, as a stream; ``run(_:)`` hands them over without one.
    public func events() -> AsyncThrowingStream<SourceEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SourceEvent.self)
        let task = Task {
            do {
                try await run { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Connects and reconnects until cancelled, handing events over on the reader's thread.
    public func run(_ handler: @escaping @Sendable (SourceEvent) -> Void) async throws {
        var attempt = 0
        var everConnected = false
        var lastReportTime: Int64?
        while !Task.isCancelled {
            // The newest fix so far goes on to the next connection: gpsd's POLL answer after a
            // reconnection may be that fix again.
            let connection = Connection(opened: time.now(), lastReportTime: lastReportTime)
            defer { lastReportTime = connection.lastReportTime }
            do throws(LocationError) {
                let reader = try await open { message in
                    forward(message, of: connection, to: handler)
                }
                everConnected = true
                try await watch(reader, connection)
            } catch {
                if connection.isWatching { attempt = 0 }
                guard everConnected || waitsForGPSD else {
                    logger.debug("gpsd unreachable", metadata: ["error": "\(error)"])
                    throw error
                }
                if Task.isCancelled { break }
                if everConnected {
                    logger.warning("gpsd connection lost", metadata: ["error": "\(error)"])
                } else if attempt == 0 {
                    logger.notice("waiting for gpsd", metadata: ["error": "\(error)"])
                }
                handler(.status(.connectionLost(error)))
            }
            attempt += 1
            let delay = reconnectPolicy.delay(forAttempt: attempt)
            handler(.status(.reconnecting(attempt: attempt, delay: delay)))
            do { try await time.sleep(delay) } catch { break }
        }
    }

    /// Opens a connection, or fails after ``connectTimeout``.
    private func open(
        onMessage: @escaping @Sendable (GPSDMessage) -> Void
    ) async throws(LocationError) -> GPSDReader {
        let outcome = await withTaskGroup(of: Result<GPSDReader, LocationError>?.self) { group in
            group.addTask { [host, port] in
                do throws(LocationError) {
                    return .success(try await GPSDReader.open(host: host, port: port, onMessage: onMessage))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask { [time, host, port, connectTimeout] in
                try? await time.sleep(connectTimeout)
                if Task.isCancelled { return nil }
                return .failure(
                    .gpsdUnreachable(host: host, port: port, reason: "no answer within \(connectTimeout.secondsText)")
                )
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let result = next { return result }
            }
            return .failure(.gpsdUnreachable(host: host, port: port, reason: "connection attempt cancelled"))
        }
        return try outcome.get()
    }

    /// What one connection has seen, written on the reader's queue and read by the watchdog.
    private final class Connection: Sendable {
        struct State {
            var lastMessage: Duration
            var version = "gpsd"
            var isWatching = false
            /// Why the connection is not to be trusted, when gpsd sent something that is not gpsd's.
            var problem: String?
            /// The newest fix time delivered on this connection, and the POLL answer's.
            /// In milliseconds since 1970: gpsd's resolution, and the same number whether libgps or
            /// the POLL decoder turned the text into a `Date`.
            var lastReportTime: Int64?
            var polledTime: Int64?
        }
        private let state: Locked<State>

        init(opened: Duration, lastReportTime: Int64?) {
            state = Locked(State(lastMessage: opened, lastReportTime: lastReportTime))
        }

        var lastMessage: Duration { state.withLock { $0.lastMessage } }
        var isWatching: Bool { state.withLock { $0.isWatching } }
        var problem: String? { state.withLock { $0.problem } }
        var lastReportTime: Int64? { state.withLock { $0.lastReportTime } }

        func update(_ body: (inout State) -> Void) {
            state.withLock { body(&$0) }
        }
    }

    /// Turns one message into events, on the reader's queue (no hop to another thread).
    private func forward(
        _ message: GPSDMessage,
        of connection: Connection,
        to handler: @Sendable (SourceEvent) -> Void
    ) {
        var message = message
        if case .polled(let report, let gpsdAge) = message, let fixTime = report.time,
            !GPSDPollReply.isCurrent(fixTime: fixTime, gpsdAge: gpsdAge, receiverNow: receiverClock.date(at: time.now()))
        {
            message = .other  // a receiver gone quiet: its last fix is not new
        }
        var version = ""
        var isRepeat = false
        connection.update { state in
            // A POLL answer and the stream can carry the same fix: deliver it once.
            switch message {
            case .polled(let report, _):
                let time = report.time.map(milliseconds)
                isRepeat = time.map { time in state.lastReportTime.map { time <= $0 } ?? false } ?? true
                state.polledTime = time
            case .report(let report):
                isRepeat = report.time != nil && report.time.map(milliseconds) == state.polledTime
                state.polledTime = nil
            default: break
            }
            if !isRepeat, case .report(let report) = message, let time = report.time {
                state.lastReportTime = milliseconds(time)
            }
            if !isRepeat, case .polled(let report, _) = message, let time = report.time {
                state.lastReportTime = milliseconds(time)
            }
            state.lastMessage = time.now()
            if case .version(let release) = message { state.version = "gpsd \(release)" }
            if case .watching = message { state.isWatching = true }
            if case .malformed(let text) = message {
                state.problem = "gpsd sent a line that is not a gpsd message: \"\(text)\""
            }
            if case .unreadable = message {
                state.problem = "gpsd sent a line libgps could not read (too long or garbled)"
            }
            version = state.version
        }
        switch message {
        case .report(let report), .polled(let report, _):
            guard !isRepeat else { break }
            if let fixTime = report.time { receiverClock.note(fixTime, at: time.now()) }
            handler(.report(report))
        case .watching:
            // gpsd took the watch: every report from now on comes (KEEPALIVE_LOG_LEVEL=debug).
            logger.debug("gpsd watching", metadata: ["gpsd": "\(version) at \(host):\(port)"])
            handler(.status(.connected("\(version) at \(host):\(port)")))
        case .error(let text):
            logger.warning("gpsd error", metadata: ["message": "\(text)"])
        case .malformed(let text):
            logger.warning("gpsd sent a malformed line", metadata: ["line": "\(text)"])
        case .unreadable:
            logger.warning("gpsd sent a line libgps could not read")
        case .version, .device, .other:
            break
        }
    }

    /// Waits until one connection closes, goes silent, or the task is cancelled.
    private func watch(_ reader: GPSDReader, _ connection: Connection) async throws(LocationError) {
        let silent = Locked(false)
        let watchdog = Task { [time, silenceTimeout] in
            // Sleeps until the silence would be too long: one wake-up per timeout while data flows.
            while !Task.isCancelled {
                let deadline = connection.lastMessage + silenceTimeout
                if time.now() >= deadline {
                    silent.withLock { $0 = true }
                    reader.close()
                    return
                }
                try? await time.sleepUntil(deadline)
            }
        }
        defer {
            watchdog.cancel()
            reader.close()
        }
        await withTaskCancellationHandler {
            await reader.waitUntilClosed()
        } onCancel: {
            reader.close()
        }
        if Task.isCancelled { return }
        let reason =
            connection.problem
            ?? (silent.withLock { $0 } ? "no data for \(silenceTimeout.secondsText)" : "gpsd closed the connection")
        throw LocationError.connectionLost(host: host, port: port, reason: reason)
    }
}

private func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

/// The last fix time a source saw and when, on its monotonic clock: shared by the copies of a
/// ``GPSDSource``.
///
/// Every year is taken, 2017 from an old log or 2005 from a receiver whose GPS week rolled
/// over: an age is the difference of two readings of this one clock, right whatever the year.
/// (The journal, which compares the receiver's time with the system's, trusts only times from
/// 2020 on: `SystemClockOffset`.)
private final class ReceiverClock: Sendable {
    private let newest = Locked<(fixTime: Date, seenAt: Duration)?>(nil)

    /// The newest report's time, even when earlier than the last (a receiver set right after a
    /// bad start): the fix it came with is the one a cached one-shot is answered from.
    func note(_ fixTime: Date, at now: Duration) {
        newest.withLock { $0 = (fixTime, now) }
    }

    func date(at now: Duration) -> Date? {
        newest.withLock { $0.map { $0.fixTime.addingTimeInterval((now - $0.seenAt).seconds) } }
    }
}
