import KeepAliveCore
import KeepAliveReceiver
import Testing

struct UBXFrameTests {
    @Test func framesCarryTheirChecksum() {
        // UBX-MON-VER poll and UBX-CFG-RST cold as u-blox's protocol description prints them.
        #expect(UBXFrame.pollVersion.bytes == [0xB5, 0x62, 0x0A, 0x04, 0x00, 0x00, 0x0E, 0x34])
        #expect(UBXFrame.reset(.cold).hex == "b56206040400ffff02000e61")
        #expect(UBXFrame.backup.hex == "b5620241080000000000020000004d3b")
    }

    @Test func theScannerFindsFramesAmongNMEAAndNoise() {
        var scanner = UBXScanner()
        let nmea = Array("$GPGGA,1*00\r\n".utf8)
        let stream = nmea + UBXFrame.backup.bytes + [0xB5, 0x62, 0x06, 0x04, 0x04, 0x00, 1, 2, 3, 4, 0, 0] + UBXFrame.pollVersion.bytes
        // Fed a byte at a time: frames split anywhere are found whole.
        var frames: [UBXFrame] = []
        for byte in stream { frames += scanner.take([byte]) }
        #expect(frames == [UBXFrame.backup, UBXFrame.pollVersion], "the frame with a bad checksum passed over")
        #expect(scanner.skipped > nmea.count)
    }

    @Test func aLengthPastTheLimitIsNoise() {
        var scanner = UBXScanner()
        #expect(scanner.take([0xB5, 0x62, 0x01, 0x02, 0xFF, 0xFF] + UBXFrame.pollVersion.bytes) == [UBXFrame.pollVersion])
    }
}
