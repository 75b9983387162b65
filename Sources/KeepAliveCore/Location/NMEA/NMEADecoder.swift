/// Bytes in, fix reports out: the scanner, the parser and the epoch assembler together,
/// counting what it skips.
///
/// It decodes bytes held in memory, or an ``NMEAInput`` read 64 KB at a time (constant memory
/// whatever the log's size; a line over 64 KB is cut there and counted as junk).
public struct NMEADecoder: Sendable {
    private var scanner: NMEAScanner
    private var assembler: NMEAFixAssembler
    private var input: NMEAInput?
    private var inputEnded = false
    private var flushed = false
    private let chunk: Int
    /// What the decoder met so far.
    public private(set) var statistics = NMEAStatistics()
    /// A stream had no bytes for the last ``next()``: ask again later (it is not the end).
    public private(set) var isWaitingForInput = false

    /// A decoder of a whole log in memory; `device` names it in reports.
    public init(bytes: [UInt8], device: String? = nil) {
        scanner = NMEAScanner(bytes: bytes)
        assembler = NMEAFixAssembler(device: device)
        inputEnded = true
        chunk = bytes.count
    }

    /// Decodes `input` as it is read, `chunk` bytes at a time.
    public init(input: NMEAInput, device: String? = nil) { self.init(input: input, device: device, chunk: 65_536) }

    init(input: NMEAInput, device: String?, chunk: Int) {
        scanner = NMEAScanner(bytes: [], isLast: false)
        assembler = NMEAFixAssembler(device: device)
        self.input = input
        self.chunk = chunk
    }

    /// The next epoch's report; `nil` at the end of the input, or while ``isWaitingForInput``.
    public mutating func next() -> FixReport? {
        isWaitingForInput = false
        repeat {
            while let item = scanner.next() {
                switch item {
                case .comment: statistics.comments += 1
                case .junk: statistics.junk += 1
                case .sentence(let range):
                    do {
                        let report = assembler.add(try NMEAParser.parse(scanner.bytes, range: range))
                        statistics.sentences += 1
                        if let report { return counted(report) }
                    } catch {
                        statistics.count(error)
                    }
                }
            }
        } while readMore()
        guard !isWaitingForInput, !flushed else { return nil }
        flushed = true
        guard let last = assembler.flush() else { return nil }
        return counted(last)
    }

    /// Reads the next piece of the input after the lines not yet ended; false when there is
    /// nothing more to scan now.
    private mutating func readMore() -> Bool {
        guard let input, !inputEnded else { return false }
        var rest = Array(scanner.bytes[scanner.unscanned...])
        do {
            switch try input.read(upTo: chunk) {
            case .bytes(let bytes): rest += bytes
            case .notYet:
                isWaitingForInput = true
                return false
            case .end: inputEnded = true
            }
        } catch {
            statistics.readError = error.message
            inputEnded = true
        }
        scanner = NMEAScanner(bytes: rest, isLast: inputEnded || rest.count > max(chunk, 65_536))
        return true
    }

    private mutating func counted(_ report: FixReport) -> FixReport {
        statistics.reports += 1
        return report
    }
}
