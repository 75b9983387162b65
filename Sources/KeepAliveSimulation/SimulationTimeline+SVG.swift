import KeepAliveCore

extension SimulationTimeline {
    /// The timeline drawn as a standalone SVG: one lane each for the app's state, background
    /// tasks, location activity, audio and the script's events, and the location events that
    /// woke the app when there were any, over a time axis.
    ///
    /// Every span and mark is one element with a class (`state`, `task`, `poll`, `pulse`,
    /// `script`, `event`) and a `<title>` that says what and when, so the picture can be checked by
    /// counting and read by hovering.
    public func svg(title: String) -> String {
        var drawing = TimelineDrawing(duration: max(duration, 1), lanes: locationEvents.isEmpty ? 5 : 6)
        drawing.title(title)
        drawing.lane(0, "app state")
        for span in states {
            drawing.span(span, lane: 0, kind: "state", fill: Self.stateColors[span.label] ?? "#9e9e9e")
        }
        drawing.lane(1, "background tasks")
        for span in backgroundTasks { drawing.span(span, lane: 1, kind: "task", fill: "#ef6c00", opacity: 0.6) }
        drawing.lane(2, "location")
        for span in location { drawing.span(span, lane: 2, kind: "poll", fill: "#00838f") }
        drawing.lane(3, "audio")
        for span in audio { drawing.span(span, lane: 3, kind: "pulse", fill: "#6a1b9a") }
        drawing.lane(4, "script")
        var lastLabel = -Double.infinity
        var row = 0
        for mark in script {
            // Labels closer than 80 px take turns on two rows.
            row = drawing.x(mark.at) - lastLabel < 80 ? 1 - row : 0
            lastLabel = drawing.x(mark.at)
            drawing.mark(mark, row: row)
        }
        if !locationEvents.isEmpty {
            drawing.lane(5, "location events")
            for mark in locationEvents { drawing.event(mark, lane: 5) }
        }
        drawing.axis()
        drawing.legend(Self.stateColors.sorted { $0.key < $1.key })
        return drawing.finish()
    }

    static let stateColors: [String: String] = [
        "active": "#2e7d32", "inactive": "#81c784", "background": "#1565c0", "suspended": "#c62828",
        "not running": "#424242",
    ]
}

/// The SVG text of a timeline, built element by element.
private struct TimelineDrawing {
    let duration: Double
    let width = 1200.0
    let left = 150.0
    let right = 30.0
    let top = 50.0
    let laneHeight = 26.0
    let laneGap = 10.0
    let lanes: Int
    private var body: [String] = []

    init(duration: Double, lanes: Int) {
        self.duration = duration
        self.lanes = lanes
    }

    var plotWidth: Double { width - left - right }
    var plotBottom: Double { laneY(lanes) - laneGap }
    var height: Double { plotBottom + 90 }

    func x(_ seconds: Double) -> Double { left + min(max(seconds, 0), duration) / duration * plotWidth }
    func laneY(_ lane: Int) -> Double { top + Double(lane) * (laneHeight + laneGap) }

    mutating func title(_ text: String) {
        body.append(##"<text x="\##(left)" y="28" font-size="16" font-weight="bold">\##(Self.escape(text))</text>"##)
    }

    mutating func lane(_ lane: Int, _ name: String) {
        let y = laneY(lane)
        body.append(
            ##"<rect class="lane" x="\##(left)" y="\##(y)" width="\##(plotWidth.fixed(1))" height="\##(laneHeight)" fill="#f5f5f5"/>"##
        )
        body.append(
            ##"<text x="\##(left - 10)" y="\##((y + laneHeight / 2 + 4).fixed(1))" text-anchor="end" font-size="12">\##(name)</text>"##
        )
    }

    /// A span at least one pixel wide, so a 0.2 s pulse in a day still shows.
    mutating func span(_ span: SimulationTimeline.Span, lane: Int, kind: String, fill: String, opacity: Double = 1) {
        let start = x(span.start)
        let end = max(x(span.end), start + 1)
        let y = laneY(lane) + (kind == "state" ? 0 : 4)
        let height = kind == "state" ? laneHeight : laneHeight - 8
        let label = "\(span.label): \(Self.clock(span.start))-\(Self.clock(span.end))"
        let opacityAttribute = opacity < 1 ? ##" fill-opacity="\##(opacity)""## : ""
        body.append(
            ##"<rect class="\##(kind)" x="\##(start.fixed(2))" y="\##(y)" width="\##((end - start).fixed(2))" height="\##(height)" fill="\##(fill)"\##(opacityAttribute)><title>\##(Self.escape(label))</title></rect>"##
        )
    }

    /// A location event: a tick in its lane, what happened in its title.
    mutating func event(_ mark: SimulationTimeline.Mark, lane: Int) {
        let at = x(mark.at)
        body.append(
            ##"<rect class="event" x="\##((at - 1).fixed(2))" y="\##(laneY(lane) + 2)" width="3" height="\##(laneHeight - 4)" fill="#f9a825"><title>\##(Self.clock(mark.at)) \##(Self.escape(mark.label))</title></rect>"##
        )
    }

    /// A script event: a dashed line across every lane, its label in the script lane.
    mutating func mark(_ mark: SimulationTimeline.Mark, row: Int) {
        let at = x(mark.at).fixed(2)
        let label = Self.escape(mark.label)
        body.append(
            ##"<g class="script"><title>\##(Self.clock(mark.at)) \##(label)</title><line x1="\##(at)" y1="\##(top)" x2="\##(at)" y2="\##(plotBottom)" stroke="#000" stroke-dasharray="3,3" stroke-width="1"/><text x="\##(at)" y="\##((laneY(4) + (row == 0 ? 10 : 22)).fixed(1))" font-size="11" dx="3">\##(label)</text></g>"##
        )
    }

    /// Ticks at a round step giving at most 12 of them, labelled as hours and minutes.
    mutating func axis() {
        let steps: [Double] = [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
        let step = steps.first { duration / $0 <= 12 } ?? 86400
        let y = plotBottom
        body.append(
            ##"<line x1="\##(left)" y1="\##(y + 4)" x2="\##(left + plotWidth)" y2="\##(y + 4)" stroke="#000"/>"##
        )
        var tick = 0.0
        while tick <= duration + 0.001 {
            let at = x(tick).fixed(2)
            body.append(
                ##"<line class="tick" x1="\##(at)" y1="\##(y + 4)" x2="\##(at)" y2="\##(y + 10)" stroke="#000"/><text x="\##(at)" y="\##(y + 24)" text-anchor="middle" font-size="11">\##(Self.clock(tick, short: true))</text>"##
            )
            tick += step
        }
        body.append(
            ##"<text x="\##(left + plotWidth / 2)" y="\##(y + 42)" text-anchor="middle" font-size="12">time since launch</text>"##
        )
    }

    mutating func legend(_ colors: [(key: String, value: String)]) {
        var x = left
        let y = plotBottom + 58
        for (name, color) in colors {
            body.append(##"<rect x="\##(x)" y="\##(y)" width="12" height="12" fill="\##(color)"/>"##)
            body.append(##"<text x="\##(x + 16)" y="\##(y + 10)" font-size="11">\##(name)</text>"##)
            x += 110
        }
    }

    func finish() -> String {
        let header =
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif">"##
        let background = ##"<rect width="100%" height="100%" fill="#fff"/>"##
        return ([##"<?xml version="1.0" encoding="UTF-8"?>"##, header, background] + body + ["</svg>", ""]).joined(
            separator: "\n"
        )
    }

    /// `1h30m`, `45m`, `12s` (short, for ticks), or `1:30:05.2`.
    static func clock(_ seconds: Double, short: Bool = false) -> String {
        let whole = Int(seconds.rounded(.down))
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        if short {
            if whole == 0 { return "0" }
            var text = ""
            if h > 0 { text += "\(h)h" }
            if m > 0 { text += "\(m)m" }
            if s > 0 { text += "\(s)s" }
            return text
        }
        let tenths = Int(((seconds - Double(whole)) * 10).rounded(.down))
        return "\(h):\(m < 10 ? "0" : "")\(m):\(s < 10 ? "0" : "")\(s).\(tenths)"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
