import Dispatch
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// One client of a host socket on the server's event loop: whole request lines in, replies
/// and notices out, never blocking, within the ``ControlLimits``.
///
/// Reads stop (the client waits, nobody else) while the client has more requests unanswered
/// than allowed or has used up its rate; a line that does not end in time, a client idle too
/// long (unless it is an app's) or one that does not read its replies is disconnected.
///
/// Unchecked `Sendable`: every stored property is used on `queue` only (each entry point hops
/// there), and the queue is the server's, serial.
final class ControlChannel: @unchecked Sendable {
    private let descriptor: Int32
    private let queue: DispatchQueue
    private let limits: ControlLimits
    private let reader: any DispatchSourceRead
    private var writer: (any DispatchSourceWrite)?
    /// Sources not yet cancelled: the descriptor is closed after the last one's cancel handler.
    private var liveSources = 1
    private var isReading = false
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var tokens: Double
    private var refilled = DispatchTime.now()
    private var lastRequest = DispatchTime.now()
    private var lastWrite = DispatchTime.now()
    private var lineBegan: DispatchTime?
    private var drainingSince: DispatchTime?
    private var drained = 0
    /// Lines handed over and not yet answered.
    private var queued = 0
    private var isResumeScheduled = false
    /// The client ended its side, or sent what is refused: no more lines are handed over.
    private var inputEnded = false
    private var shutsWritingWhenSent = false
    private var closesWhenSent = false
    private var isFinished = false
    private var isApp = false
    private var hasRequested = false
    /// On the apps' socket a connection that has not said hello is closed when idle, however
    /// many requests it made; on the control socket only one that never asked anything is (a
    /// compositor holds its connection between moves).
    private let isIdleAfterRequests: Bool
    private var onLine: ([UInt8]) -> Void = { _ in }
    private var onInputEnd: () -> Void = {}
    private var onFinish: () -> Void = {}
    private var onChange: () -> Void = {}

    /// How long a refused client may still send before it is closed (time to read the refusal).
    static let drainTime: Duration = .seconds(1)

    init(descriptor: Int32, queue: DispatchQueue, limits: ControlLimits, forApps: Bool) {
        self.descriptor = descriptor
        isIdleAfterRequests = forApps
        self.queue = queue
        self.limits = limits
        tokens = Double(limits.requestBurst)
        reader = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
    }

    /// Starts reading: `line` gets each request line (on the queue), `inputEnded` once no more
    /// will come, `finished` once the connection is closed, `changed` after each event that
    /// may have moved its ``nextDeadline``.
    func start(
        line: @escaping ([UInt8]) -> Void,
        inputEnded: @escaping () -> Void,
        finished: @escaping () -> Void,
        changed: @escaping () -> Void = {}
    ) {
        dispatchPrecondition(condition: .onQueue(queue))
        onLine = line
        onInputEnd = inputEnded
        onFinish = finished
        onChange = changed
        // The handlers hold the channel until the source is cancelled (Dispatch then lets them go).
        reader.setEventHandler {
            self.readAvailable()
            self.onChange()
        }
        reader.setCancelHandler { self.sourceCancelled() }
        reader.activate()
        isReading = true
    }

    // MARK: From any thread

    /// Sends `bytes` after what was sent before.
    func send(_ bytes: [UInt8]) { onQueue { self.enqueue(bytes) } }

    /// The host answered one of the lines handed over: more may be read.
    func lineHandled() {
        onQueue {
            self.queued -= 1
            self.deliverLines()
        }
    }

    /// The client said hello as an app: it is not closed for being idle (a frozen app is).
    func identifyAsApp() { onQueue { self.isApp = true } }

    /// After what was sent, ends this side's writing: the client reads to the end, then EOF.
    /// What it still sends is read and dropped, so the close resets nothing it has not read.
    func closeForWriting() { onQueue { self.endAfterSending() } }

    /// Runs `body` on the queue, then says the deadlines may have moved.
    private func onQueue(_ body: @escaping @Sendable () -> Void) {
        queue.async {
            body()
            self.onChange()
        }
    }

    /// Closes the connection once what was sent is out.
    func close() {
        onQueue {
            self.input = []
            self.endInput(draining: false)
            self.closesWhenSent = true
            self.flush()
        }
    }

    // MARK: On the queue

    /// Sends why the connection ends, and ends it as ``closeForWriting()`` does.
    func refuse(_ reason: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        enqueue(HostProtocol.encode(HostReply(id: nil, ok: false, error: reason)))
        endAfterSending()
    }

    /// No more lines; what the client still sends is dropped; writing ends once all is sent.
    private func endAfterSending() {
        endInput(draining: true)
        shutsWritingWhenSent = true
        flush()
    }

    /// A timeout of the connection's, and what it does when it falls due.
    private enum Timeout {
        /// A refused client still sending after the drain's time: closed.
        case draining
        /// Replies the client does not read: closed.
        case unread
        /// A request line that does not end: refused.
        case unendedLine
        /// A client idle too long (an app's never is): refused.
        case idle
    }

    /// The timeouts running now, in the order they are enforced, each with when it falls due.
    /// The one account of them: the server's loop sets its timer from it, and sets none when
    /// it is empty (a frozen app's idle connection).
    private var runningTimeouts: [(due: DispatchTime, timeout: Timeout)] {
        guard !isFinished else { return [] }
        func after(_ instant: DispatchTime, _ limit: Duration) -> DispatchTime {
            let (seconds, attoseconds) = limit.components
            return instant + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000) + 1)
        }
        var timeouts: [(due: DispatchTime, timeout: Timeout)] = []
        if let drainingSince { timeouts.append((after(drainingSince, Self.drainTime), .draining)) }
        if !output.isEmpty { timeouts.append((after(lastWrite, limits.lineTimeout), .unread)) }
        guard !inputEnded else { return timeouts }
        if let lineBegan { timeouts.append((after(lineBegan, limits.lineTimeout), .unendedLine)) }
        if !isApp, isIdleAfterRequests || !hasRequested, queued == 0, input.isEmpty {
            timeouts.append((after(lastRequest, limits.idleTimeout), .idle))
        }
        return timeouts
    }

    /// When the earliest of the running timeouts falls due, if any runs.
    var nextDeadline: DispatchTime? { runningTimeouts.map(\.due).min() }

    /// The timeouts, at `now`: a line that does not end, a client idle too long, one that
    /// reads nothing of what it is sent, a refused one that keeps sending.
    func enforceTimeouts(at now: DispatchTime) {
        guard let due = runningTimeouts.first(where: { $0.due <= now }) else { return }
        switch due.timeout {
        case .draining, .unread: finish()
        case .unendedLine: refuse("a request line must end within \(limits.lineTimeout)")
        case .idle: refuse("closed after \(limits.idleTimeout) without a request")
        }
    }

    private func readAvailable() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while total < 65_536, !isFinished {  // then the others' turn
            let count = SystemCall.retryingOnInterrupt {
                chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { break }
            guard count > 0 else {  // the end, or the connection reset
                pauseReading()
                if count < 0 { return finish() }
                if drainingSince != nil {  // refused: closed once the refusal is out
                    closesWhenSent = true
                    return flush()
                }
                endInput(draining: false)
                return deliverLines()
            }
            total += count
            if drainingSince != nil {
                drained += count
                if drained > 1 << 20 { return finish() }
                continue
            }
            input.append(contentsOf: chunk[0..<count])
        }
        deliverLines()
    }

    /// Hands over whole lines while the client's queue and rate allow; else reads no more
    /// until they do.
    private func deliverLines() {
        guard !isFinished, drainingSince == nil else { return }
        while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
            if newline == 0 {  // an empty line asks nothing
                input.removeFirst()
                continue
            }
            guard queued < limits.queuedRequests else { return pauseReading() }
            guard takeToken() else { return pauseReading() }
            let line = Array(input[..<newline])
            input.removeSubrange(...newline)
            lineBegan = nil  // a line ended: the next one's time starts now
            queued += 1
            lastRequest = .now()
            hasRequested = true
            onLine(line)
        }
        if input.count > HostProtocol.maximumLineLength {  // handed over whole: the host refuses it
            let line = input
            input = []
            queued += 1
            onLine(line)
            endInput(draining: true)
            return
        }
        lineBegan = input.isEmpty ? nil : (lineBegan ?? .now())
        if inputEnded {
            if !input.isEmpty { input = [] }  // a last line without its newline is not a request
            onInputEnd()
            onInputEnd = {}
        } else if !isReading {
            reader.resume()
            isReading = true
        }
    }

    private func takeToken() -> Bool {
        let now = DispatchTime.now()
        let seconds = Double(now.uptimeNanoseconds - refilled.uptimeNanoseconds) / 1e9
        refilled = now
        tokens = min(Double(limits.requestBurst), tokens + seconds * Double(limits.requestsPerSecond))
        if tokens >= 1 {
            tokens -= 1
            return true
        }
        if !isResumeScheduled {
            isResumeScheduled = true
            let wait = (1 - tokens) / Double(limits.requestsPerSecond)
            queue.asyncAfter(deadline: .now() + wait) { [weak self] in
                guard let self else { return }
                isResumeScheduled = false
                deliverLines()
                onChange()
            }
        }
        return false
    }

    private func pauseReading() {
        guard isReading else { return }
        reader.suspend()
        isReading = false
    }

    /// No more lines: the client ended, was refused, or is being closed.
    private func endInput(draining: Bool) {
        if draining, drainingSince == nil {
            drainingSince = .now()
            input = []
            if !isReading, !isFinished {
                reader.resume()  // to read and drop what it sends
                isReading = true
            }
        }
        guard !inputEnded else { return }
        inputEnded = true
        lineBegan = nil
        if draining || input.firstIndex(of: UInt8(ascii: "\n")) == nil {
            input = []
            onInputEnd()
            onInputEnd = {}
        }
    }

    private func enqueue(_ bytes: [UInt8]) {
        guard !isFinished else { return }
        if output.isEmpty { lastWrite = .now() }
        output.append(contentsOf: bytes)
        guard output.count <= limits.unsentBytes else { return finish() }  // it reads nothing
        flush()
    }

    private func flush() {
        guard !isFinished else { return }
        while !output.isEmpty {
            let sent = SystemCall.retryingOnInterrupt {
                output.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK { return waitUntilWritable() }
            guard sent > 0 else { return finish() }  // the client is gone
            output.removeFirst(sent)
            lastWrite = .now()
        }
        if let writer {
            self.writer = nil
            writer.cancel()
        }
        if closesWhenSent { return finish() }
        if shutsWritingWhenSent {
            shutsWritingWhenSent = false
            shutdown(descriptor, Int32(SHUT_WR))
        }
    }

    private func waitUntilWritable() {
        guard writer == nil else { return }
        let writer = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
        writer.setEventHandler {
            self.flush()
            self.onChange()
        }
        writer.setCancelHandler { self.sourceCancelled() }
        liveSources += 1
        self.writer = writer
        writer.activate()
    }

    /// Closes the connection now: no more reads or writes.
    private func finish() {
        guard !isFinished else { return }
        isFinished = true
        if !isReading { reader.resume() }  // a suspended source may not be cancelled
        isReading = false
        reader.cancel()
        writer?.cancel()
        writer = nil
        output = []
        input = []
        if !inputEnded {
            inputEnded = true
            onInputEnd()
            onInputEnd = {}
        }
        onFinish()
        onFinish = {}
    }

    private func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 { Glibc.close(descriptor) }
    }

    /// The host is done with the connection: closed once what waits is sent (a refused
    /// client's, once it stops sending or the drain's time is up).
    func finishIfDone() {
        onQueue {
            self.input = []
            self.endInput(draining: false)
            guard self.drainingSince == nil else { return }
            self.closesWhenSent = true
            self.flush()
        }
    }
}
