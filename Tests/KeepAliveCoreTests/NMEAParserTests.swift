import KeepAliveCore
import Testing

@Suite struct NMEAParserTests {
    @Test func decodesRMC() throws {
        let sentence = try NMEAParser.parse("$GPRMC,202640.000,A,4404.1306,N,12118.8515,W,0.03,225.97,130415,,,D*73")
        guard case .rmc(let rmc) = sentence else {
            Issue.record("not RMC: \(sentence)")
            return
        }
        #expect(rmc.time == NMEATime(millisecondsOfDay: (20 * 3600 + 26 * 60 + 40) * 1000))
        #expect(rmc.isValid == true)
        #expect(abs(rmc.latitude! - 44.068843333) < 1e-9)
        #expect(abs(rmc.longitude! - -121.314191667) < 1e-9)
        #expect(rmc.speedKnots == 0.03)
        #expect(rmc.course == 225.97)
        #expect(rmc.date == NMEADate(year: 2015, month: 4, day: 13))
        #expect(rmc.faaMode == UInt8(ascii: "D"))
    }

    @Test func decodesGGAWithEmptyFields() throws {
        guard case .gga(let gga) = try NMEAParser.parse(withChecksum("$GPGGA,095257.809,,,,,0,00,,,M,,M,,")) else {
            Issue.record("not GGA")
            return
        }
        #expect(gga.quality == 0)
        #expect(gga.latitude == nil && gga.longitude == nil && gga.hdop == nil && gga.altitudeMSL == nil)
    }

    @Test(arguments: [
        "$GNGGA,074155.799,3114.8770,N,12135.2463,E,1,05,1.3,156.9,M,8.3,M,,0000,4.9*77",
        "$INGGA,194104,4426.1138,N,07140.5536,W,2,10,0.9,267.9,M,,,,*13",
        "$GNGNS,074155.799,3114.8770,N,12135.2463,E,ANNA,05,1.3,156.9,8.3,,0000*52",
    ])
    func decodesEveryTalker(line: String) throws {
        switch try NMEAParser.parse(line) {
        case .gga(let gga), .gns(let gga):
            #expect(gga.latitude != nil && gga.longitude != nil && gga.quality ?? 0 > 0)
        default: Issue.record("not a fix sentence")
        }
    }

    @Test func decodesGSAGLLVTGGSTZDA() throws {
        guard case .gsa(let gsa) = try NMEAParser.parse("$GPGSA,A,3,20,16,09,03,07,10,23,19,27,30,,,1.64,0.98,1.31*05")
        else {
            Issue.record("not GSA")
            return
        }
        #expect(gsa.fixType == 3 && gsa.satellitesUsed == 10 && gsa.hdop == 0.98 && gsa.vdop == 1.31)
        guard case .gll(let gll) = try NMEAParser.parse("$GPGLL,5547.82107,N,02334.14132,E,152504.50,A,A*67")
        else {
            Issue.record("not GLL")
            return
        }
        #expect(gll.isValid == true && gll.time?.millisecondsOfDay == (15 * 3600 + 25 * 60 + 4) * 1000 + 500)
        guard case .vtg(let vtg) = try NMEAParser.parse("$GPVTG,303.60,T,,M,0.14,N,0.26,K,A*3A")
        else {
            Issue.record("not VTG")
            return
        }
        #expect(vtg.course == 303.6 && vtg.speedKnots == 0.14)
        guard case .zda(let zda) = try NMEAParser.parse("$GPZDA,202640.000,13,04,2015,,*54")
        else {
            Issue.record("not ZDA")
            return
        }
        #expect(zda.date == NMEADate(year: 2015, month: 4, day: 13))
        guard case .gst(let gst) = try NMEAParser.parse(withChecksum("$GPGST,001901.00,1.2,,,,3.1,2.9,5.1")),
            gst.latitudeError == 3.1, gst.altitudeError == 5.1
        else {
            Issue.record("not GST")
            return
        }
    }

    @Test func proprietaryAndUnknownSentencesAreOther() throws {
        #expect(try NMEAParser.parse("$PGRMZ,246,f,3*1B") == .other)
        #expect(try NMEAParser.parse(withChecksum("$SDVHW,238.0,T,236.6,M,6.6,N,12.3,K")) == .other)
        #expect(try NMEAParser.parse(withChecksum("$GPGSV,3,2,12,20,36,137,36,21,66,077,37,26,56,178,33,27,45,282,38")) == .other)
    }

    /// The sentences without a fix that gpsd 3.22 decodes, with its checks: they decide when
    /// gpsd reports an epoch on a bus with a depth sounder.
    @Test(arguments: [
        ("$GPGSV,3,3,12,19,13,123,27,03,07,176,19,05,05,328,13,47,,,", NMEASentence.ancillary(.satellitesInView)),
        ("$SDHDG,236.6,,,1.3,E", .ancillary(.heading)),
        ("$SDHDG,,,,1.3,E", .other),
        ("$SDHDG,361.0,,,1.3,E", .other),
        ("$GPHDT,274.07,T", .ancillary(.heading)),
        ("$WIMWV,78.8,R,12.0,N,A", .ancillary(.wind)),
        ("$WIMWV,96.6,T,11.2,N,A", .other),
        ("$WIMWV,78.8,R,12.0,N,V", .other),
        ("$WIMWD,329.2,T,327.8,M,11.8,N,6.1,M", .ancillary(.wind)),
        ("$SDDBT,17.5,f,5.3,M,2.9,F", .ancillary(.depth(metres: 5.3))),
        ("$SDDBT,1.0,f,,M,,F", .ancillary(.depth(metres: 0.3048))),
        ("$SDDBT,,f,,M,,F", .ancillary(.depth(metres: nil))),
        ("$SDDBT,17.5,f,5.3", .other),
    ])
    func sentencesGPSDDecodesWithoutAFixAreAncillary(line: String, expected: NMEASentence) throws {
        #expect(try NMEAParser.parse(withChecksum(line)) == expected)
    }

    @Test func rejectsBadAndMissingChecksums() {
        #expect(throws: NMEAError(.badChecksum)) {
            try NMEAParser.parse("$GPRMC,202640.000,A,4404.1306,N,12118.8515,W,0.03,225.97,130415,,,D*74")
        }
        #expect(throws: NMEAError(.missingChecksum)) { try NMEAParser.parse("$GPRMC,202640.000,A,4404.13") }
        #expect(throws: NMEAError(.missingChecksum)) { try NMEAParser.parse("$GPGGA,1*") }
        #expect(throws: NMEAError(.malformed)) { try NMEAParser.parse("$G*47") }
    }

    @Test func rejectsOutOfRangeFieldsAsUnknown() throws {
        // Minutes of 61 are not a position: the field is unknown, the sentence stays.
        let line = "$GPGGA,205040.000,4461.1306,N,12118.8515,W,1,10,0.98,1127.7,M,-19.6,M,0000,0000"
        guard case .gga(let gga) = try NMEAParser.parse(withChecksum(line))
        else {
            Issue.record("not GGA")
            return
        }
        #expect(gga.time != nil && gga.latitude == nil && gga.longitude != nil)
    }

    @Test(arguments: ["256040.000", "240000.00", "1200xx.00", "12000"])
    func aTimeThatIsThereButUnreadableMakesTheSentenceMalformed(time: String) {
        // gpsd 3.22 never lets such a sentence into the current epoch: its position must not
        // overwrite the epoch's (see Mocks/Fixtures/agreement/unreadable-times.log).
        let line = "$GPRMC,\(time),A,4404.1306,N,12118.8515,W,0.5,54.7,221126,,,A"
        #expect(throws: NMEAError(.malformed)) { try NMEAParser.parse(withChecksum(line)) }
    }

    @Test func aLeapSecondRunsIntoTheNextMinuteAsInGPSD() throws {
        let line = "$GPRMC,140060.00,A,4404.1306,N,12118.8515,W,0.5,54.7,221126,,,A"
        guard case .rmc(let rmc) = try NMEAParser.parse(withChecksum(line)) else {
            Issue.record("not RMC")
            return
        }
        #expect(rmc.time?.millisecondsOfDay == (14 * 60 + 1) * 60_000)
    }

    @Test func scannerSkipsCommentsJunkAndSplitsGluedSentences() {
        let text =
            "# header\r\n\u{0}\u{1}\u{FF}junk$GPZDA,202640.000,13,04,2015,,*54\r\n"
            + " $GPZDA,202640.000,13,04,2015,,*54$GPZDA,202640.000,13,04,2015,,*54\nnoise only\n"
        var scanner = NMEAScanner(bytes: Array(text.utf8))
        var items: [String] = []
        while let item = scanner.next() {
            switch item {
            case .comment: items.append("comment")
            case .junk: items.append("junk")
            case .sentence(let range):
                items.append((try? NMEAParser.parse(scanner.bytes, range: range)).map { _ in "ok" } ?? "bad")
            }
        }
        #expect(items == ["comment", "junk", "ok", "ok", "ok", "junk"])
    }
}

/// A sentence body with its checksum appended.
func withChecksum(_ body: String) -> String {
    let checksum = body.utf8.dropFirst().reduce(UInt8(0), ^)
    return body + "*" + (checksum < 16 ? "0" : "") + String(checksum, radix: 16, uppercase: true)
}
