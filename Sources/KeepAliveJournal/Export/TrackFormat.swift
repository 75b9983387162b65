/// The formats `keepalive export` writes.
public enum TrackFormat: String, Sendable, CaseIterable {
    /// GPX 1.1: one `trk`, a new `trkseg` after a gap, speed and course in extensions.
    case gpx
    /// A GeoJSON FeatureCollection of Points.
    case geojson
    /// One JSON object a line.
    case ndjson
    /// A header line, then one line a fix.
    case csv
}
