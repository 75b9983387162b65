import FoundationEssentials

/// The background modes an app declares, as in its Info.plist's `UIBackgroundModes`.
public struct BackgroundModes: OptionSet, Sendable, Hashable, Codable {
    /// The modes as bits.
    public let rawValue: Int
    /// The modes whose bits are set in `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Audio, AirPlay and Picture in Picture: playing audio keeps the app running.
    public static let audio = BackgroundModes(rawValue: 1 << 0)
    /// Location updates: location activity with "always" authorization keeps the app running.
    public static let location = BackgroundModes(rawValue: 1 << 1)
    /// Background fetch.
    public static let fetch = BackgroundModes(rawValue: 1 << 2)
    /// Background processing (BGProcessingTask).
    public static let processing = BackgroundModes(rawValue: 1 << 3)

    /// Every mode.
    public static let all: BackgroundModes = [.audio, .location, .fetch, .processing]

    /// Parses `audio,location,fetch,processing` (or `none`).
    public init?(parsing text: String) {
        var modes: BackgroundModes = []
        for name in text.split(separator: ",").map({ $0.trimmed }) {
            switch name {
            case "audio": modes.insert(.audio)
            case "location": modes.insert(.location)
            case "fetch": modes.insert(.fetch)
            case "processing": modes.insert(.processing)
            case "none", "": break
            default: return nil
            }
        }
        self = modes
    }

    /// The modes' names, as `init(parsing:)` reads them.
    public var names: [String] {
        [(BackgroundModes.audio, "audio"), (.location, "location"), (.fetch, "fetch"), (.processing, "processing")]
            .filter { contains($0.0) }.map(\.1)
    }
}
