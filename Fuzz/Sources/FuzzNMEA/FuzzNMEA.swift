import KeepAliveCore

/// libFuzzer entry: any bytes through the whole NMEA decoder (scanner, parser, epoch assembly).
/// A fix must be in range; anything else is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNMEA(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var decoder = NMEADecoder(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    while let report = decoder.next() {
        if let fix = report.location {
            precondition(fix.latitude.isFinite && abs(fix.latitude) <= 90, "latitude out of range")
            precondition(fix.longitude.isFinite && abs(fix.longitude) <= 180, "longitude out of range")
        }
    }
    return 0
}
