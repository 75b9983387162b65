public import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring

/// Writes a journal's fixes as a track, with its location events, streamed: records are read in
/// pages and written in 64 KB chunks, so memory stays constant whatever the journal's size. The
/// output is always complete (headers and closing tags) when `export` returns.
///
/// Events are GPX waypoints (`wpt`, before the track: name the condition, type its state),
/// GeoJSON Point features with `event` and `state` properties, and `event` and `state` fields
/// in NDJSON and CSV, each in order with the fixes.
public struct TrackExporter: Sendable {
    /// What it writes.
    public var format: TrackFormat
    /// GPX: a gap between fixes longer than this starts a new `trkseg`.
    public var segmentGap: Duration
    /// The track's name (GPX `trk` name).
    public var name: String

    /// An exporter to `format`; a gap longer than `segmentGap`, or a sleep of the device the
    /// journal marked (``FixJournal/gaps()``), starts a new segment.
    public init(format: TrackFormat, segmentGap: Duration = .seconds(300), name: String = "keepalive") {
        self.format = format
        self.segmentGap = segmentGap
        self.name = name
    }

    /// Writes every fix and event of `journal` whose own time (the fix time, else when it was
    /// journaled) is in `from...to` to `write`; returns how many records, events included.
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
        if format == .gpx {
            // GPX puts waypoints before the track: the events first, in a pass of their own.
            try journal.forEachEvent(from: from, to: to) { record in
                try emit(waypoint(record))
                count += 1
            }
            try emit("<trk>\n  <name>\(Self.escapedXML(name))</name>\n")
        }
        // A sleep of the device ends a segment too, however short: the track did not go on.
        var sleeps = try journal.gaps().map(\.afterSequence)[...]
        var previousSequence: Int64 = 0
        try journal.forEachRecord(from: from, to: to) { record in
            let time = record.location.timestamp ?? record.recordedAt
            if format == .gpx {
                guard record.event == nil else { return }
                var slept = false
                while let gap = sleeps.first, gap < record.sequence {
                    slept = slept || gap >= previousSequence
                    sleeps.removeFirst()
                }
                if previous == nil {
                    try emit("  <trkseg>\n")
                } else if slept || time.timeIntervalSince(previous!) > segmentGap.seconds {
                    try emit("  </trkseg>\n  <trkseg>\n")
                }
            }
            try emit(line(record, time: time, first: count == 0))
            if record.event == nil {
                previous = time
                previousSequence = record.sequence
            }
            count += 1
        }
        try emit(footer(hadPoints: previous != nil))
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

            """
        case .geojson: "{\"type\":\"FeatureCollection\",\"features\":[\n"
        case .ndjson: ""
        case .csv:
            "sequence,id,time,recorded_at,latitude,longitude,altitude,horizontal_accuracy,vertical_accuracy,speed,course,mode,satellites,battery,event,state\n"
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
            if let event = record.event { properties += Self.eventProperties(event) }
            properties += Self.clockProperty(record)
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
            if let event = record.event { object += Self.eventProperties(event) }
            object += Self.clockProperty(record)
            return object + "}\n"
        case .csv:
            func field(_ value: Double?, _ decimals: Int) -> String { value.map { $0.fixed(decimals) } ?? "" }
            return [
                "\(record.sequence)", record.id, when, Self.iso(record.recordedAt), fix.latitude.fixed(7), fix.longitude.fixed(7),
                field(altitude, 2), field(fix.horizontalAccuracy, 2), field(fix.verticalAccuracy, 2), field(fix.speed, 3),
                field(fix.course, 2), "\(fix.mode.rawValue)", fix.satellitesUsed.map(String.init) ?? "",
                record.battery.map(String.init) ?? "", record.event.map { Self.csvField($0.identifier) } ?? "",
                record.event?.state.rawValue ?? "",
            ].joined(separator: ",") + "\n"
        }
    }

    /// A GPX waypoint for an event: its fix's place, the event's time, the condition's
    /// identifier as the name and what happened as the description and type.
    private func waypoint(_ record: JournalRecord) -> String {
        guard let event = record.event else { return "" }
        let fix = record.location
        var point = "<wpt lat=\"\(fix.latitude.fixed(7))\" lon=\"\(fix.longitude.fixed(7))\">"
        if let altitude = fix.altitudeMSL ?? fix.altitudeHAE { point += "<ele>\(altitude.fixed(2))</ele>" }
        point += "<time>\(Self.iso(event.date))</time><name>\(Self.escapedXML(event.identifier))</name>"
        point += "<desc>\(Self.escapedXML(Self.describe(event)))</desc><type>\(event.state.rawValue)</type>"
        point += "<extensions><keepalive:sequence>\(record.sequence)</keepalive:sequence></extensions>"
        return point + "</wpt>\n"
    }

    /// `"event":…,"state":…,"eventTime":…`, a named region's `"regionName"`, and, for a visit,
    /// its arrival and departure.
    /// `"systemClockOffset"` for a fix that arrived while the system clock was wrong (its
    /// `recordedAt` is then in the receiver's time): the offset in seconds, system minus receiver.
    static func clockProperty(_ record: JournalRecord) -> String {
        guard record.isMarkedForClock, let offset = record.systemClockOffset else { return "" }
        return ",\"systemClockOffset\":\(offset.seconds.fixed(3))"
    }

    static func eventProperties(_ event: MonitorEvent) -> String {
        var text = ",\"event\":\"\(event.identifier.jsonEscaped)\",\"state\":\"\(event.state.rawValue)\""
        text += ",\"eventTime\":\"\(iso(event.date))\""
        if let name = event.condition?.name { text += ",\"regionName\":\"\(name.jsonEscaped)\"" }
        if let visit = event.visit {
            text += ",\"visitArrival\":\"\(iso(visit.arrival))\""
            if let departure = visit.departure { text += ",\"visitDeparture\":\"\(iso(departure))\"" }
        }
        return text
    }

    /// What happened, in words: `home: satisfied (arrived 2018-…)`, `f7676c "Home": unsatisfied`.
    static func describe(_ event: MonitorEvent) -> String {
        var text = event.identifier + (event.condition?.name.map { " \"\($0)\"" } ?? "") + ": \(event.state)"
        if let visit = event.visit {
            text += visit.departure.map { " (left \(iso($0)))" } ?? " (arrived \(iso(visit.arrival)))"
        }
        return text
    }

    /// A CSV field, quoted when it holds a comma, a quote or a line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacing("\"", with: "\"\"") + "\""
    }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func escapedXML(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }
}
