public import FoundationEssentials
import KeepAliveCore

/// Writes a journal's fixes as a track, streamed: records are read in pages and written in
/// 64 KB chunks, so memory stays constant whatever the journal's size. The output is always
/// complete (headers and closing tags) when `export` returns.
public struct TrackExporter: Sendable {
    /// What it writes.
    public var format: TrackFormat
    /// GPX: a gap between fixes longer than this starts a new `trkseg`.
    public var segmentGap: Duration
    /// The track's name (GPX `trk` name).
    public var name: String

    /// An exporter to `format`; a gap longer than `segmentGap` starts a new segment.
    public init(format: TrackFormat, segmentGap: Duration = .seconds(300), name: String = "keepalive") {
        self.format = format
        self.segmentGap = segmentGap
        self.name = name
    }

    /// Writes every fix of `journal` with a time in `from...to` to `write`; returns how many.
    @discardableResult
    public func export(
        _ journal: FixJournal,
        from: Date? = nil,
        to: Date? = nil,
        write: (ArraySlice<UInt8>) throws -> Void
    ) throws -> Int {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        func emit(_ text: String) throws {
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 {
                try write(buffer[...])
                buffer.removeAll(keepingCapacity: true)
            }
        }
        var count = 0
        var previous: Date?
        try emit(header)
        try journal.forEachRecord(from: from, to: to) { record in
            let time = record.location.timestamp ?? record.recordedAt
            if format == .gpx {
                if previous == nil {
                    try emit("  <trkseg>\n")
                } else if let previous, time.timeIntervalSince(previous) > segmentGap.seconds {
                    try emit("  </trkseg>\n  <trkseg>\n")
                }
            }
            try emit(line(record, time: time, first: count == 0))
            previous = time
            count += 1
        }
        try emit(footer(hadPoints: count > 0))
        if !buffer.isEmpty { try write(buffer[...]) }
        return count
    }

    private var header: String {
        switch format {
        case .gpx:
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="keepalive" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:keepalive="https://github.com/locationkeepalive/gpx/1">
            <trk>
              <name>\(Self.escapedXML(name))</name>

            """
        case .geojson: "{\"type\":\"FeatureCollection\",\"features\":[\n"
        case .ndjson: ""
        case .csv: "sequence,id,time,recorded_at,latitude,longitude,altitude,horizontal_accuracy,vertical_accuracy,speed,course,mode,satellites,battery\n"
        }
    }

    private func footer(hadPoints: Bool) -> String {
        switch format {
        case .gpx: (hadPoints ? "  </trkseg>\n" : "") + "</trk>\n</gpx>\n"
        case .geojson: "\n]}\n"
        case .ndjson, .csv: ""
        }
    }

    private func line(_ record: JournalRecord, time: Date, first: Bool) -> String {
        let fix = record.location
        let altitude = fix.altitudeMSL ?? fix.altitudeHAE
        let when = Self.iso(time)
        switch format {
        case .gpx:
            var point = "    <trkpt lat=\"\(fix.latitude.fixed(7))\" lon=\"\(fix.longitude.fixed(7))\">"
            if let altitude { point += "<ele>\(altitude.fixed(2))</ele>" }
            point += "<time>\(when)</time>"
            if fix.mode == .twoDimensional || fix.mode == .threeDimensional {
                point += "<fix>\(fix.mode == .threeDimensional ? "3d" : "2d")</fix>"
            }
            if let satellites = fix.satellitesUsed { point += "<sat>\(satellites)</sat>" }
            if fix.speed != nil || fix.course != nil {
                point += "<extensions>"
                if let speed = fix.speed { point += "<keepalive:speed>\(speed.fixed(3))</keepalive:speed>" }
                if let course = fix.course { point += "<keepalive:course>\(course.fixed(2))</keepalive:course>" }
                point += "</extensions>"
            }
            return point + "</trkpt>\n"
        case .geojson:
            var properties = "\"sequence\":\(record.sequence),\"id\":\"\(record.id)\",\"time\":\"\(when)\""
            for (key, value) in [
                ("altitude", altitude), ("horizontalAccuracy", fix.horizontalAccuracy), ("speed", fix.speed), ("course", fix.course),
            ] {
                if let value, value.isFinite { properties += ",\"\(key)\":\(value.fixed(3))" }
            }
            return (first ? "" : ",\n")
                + "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(fix.longitude.fixed(7)),\(fix.latitude.fixed(7))"
                + (altitude.map { ",\($0.fixed(2))" } ?? "") + "]},\"properties\":{\(properties)}}"
        case .ndjson:
            var object = "{\"sequence\":\(record.sequence),\"id\":\"\(record.id)\",\"time\":\"\(when)\""
            object += ",\"recordedAt\":\"\(Self.iso(record.recordedAt))\",\"latitude\":\(fix.latitude.fixed(7)),\"longitude\":\(fix.longitude.fixed(7))"
            for (key, value) in [
                ("altitude", altitude), ("horizontalAccuracy", fix.horizontalAccuracy), ("verticalAccuracy", fix.verticalAccuracy),
                ("speed", fix.speed), ("course", fix.course),
            ] {
                if let value, value.isFinite { object += ",\"\(key)\":\(value.fixed(3))" }
            }
            object += ",\"mode\":\(fix.mode.rawValue)"
            if let battery = record.battery { object += ",\"battery\":\(battery)" }
            return object + "}\n"
        case .csv:
            func field(_ value: Double?, _ decimals: Int) -> String { value.map { $0.fixed(decimals) } ?? "" }
            return [
                "\(record.sequence)", record.id, when, Self.iso(record.recordedAt), fix.latitude.fixed(7), fix.longitude.fixed(7),
                field(altitude, 2), field(fix.horizontalAccuracy, 2), field(fix.verticalAccuracy, 2), field(fix.speed, 3),
                field(fix.course, 2), "\(fix.mode.rawValue)", fix.satellitesUsed.map(String.init) ?? "",
                record.battery.map(String.init) ?? "",
            ].joined(separator: ",") + "\n"
        }
    }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func escapedXML(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }
}
