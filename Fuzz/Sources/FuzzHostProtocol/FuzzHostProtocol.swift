import KeepAliveHost

/// libFuzzer entry: any bytes as one control-socket line. A line that decodes must encode and
/// decode again to the same request; anything else must be a clear `badRequest`, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHostProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let line = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let request = try HostProtocol.decodeRequest(line)
        let again = try HostProtocol.decodeRequest(HostProtocol.encode(request).dropLast())
        precondition(again == request, "a request changed in a round trip")
    } catch {
        precondition(error.code == .badRequest, "unexpected error: \(error)")
    }
    return 0
}
