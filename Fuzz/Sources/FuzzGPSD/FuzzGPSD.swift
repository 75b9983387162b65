@_spi(Fuzzing) import KeepAliveCore

/// libFuzzer entry: any bytes as one gpsd line, through the class reader and the POLL decoder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGPSD(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = GPSDFuzzing.decode(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
