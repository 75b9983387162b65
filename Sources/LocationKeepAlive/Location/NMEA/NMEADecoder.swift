/// Bytes in, fix reports out: the scanner, the parser and the epoch assembler together,
/// counting what it skips.
public struct NMEADecoder: Sendable {
    private var scanner: NMEAScanner
    private var assembler: NMEAFixAssembler
    private var flushed = false
    /// What the decoder met so far.
    public private(set) var statistics = NMEAStatistics()

    public init(bytes: [UInt8], device: String? = nil) {
        scanner = NMEAScanner(bytes: bytes)
        assembler = NMEAFixAssembler(device: device)
    }

    /// The next epoch's report, or `nil` at the end of the input.
    public mutating func next() -> FixReport? {
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
        guard !flushed else { return nil }
        flushed = true
        guard let last = assembler.flush() else { return nil }
        return counted(last)
    }

    private mutating func counted(_ report: FixReport) -> FixReport {
        statistics.reports += 1
        return report
    }
}
