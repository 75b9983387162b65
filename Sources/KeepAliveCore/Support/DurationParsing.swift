/// Durations as people write them on a command line or in a script.
extension Duration {
    /// Parses `90`, `90s`, `1.5s`, `10m`, `24h`, `1h30m`, `2d`, `250ms`: seconds when no unit.
    public init?(parsing text: String) {
        var total = 0.0
        var number = ""
        var sawUnit = false
        var characters = Array(text.trimmed)
        guard !characters.isEmpty else { return nil }
        if characters.last.map({ $0.isNumber || $0 == "." }) == true { characters.append("s") }
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isNumber || character == "." {
                number.append(character)
                index += 1
                continue
            }
            guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
            let scale: Double
            if character == "m", index + 1 < characters.count, characters[index + 1] == "s" {
                scale = 0.001
                index += 1
            } else {
                switch character {
                case "s": scale = 1
                case "m": scale = 60
                case "h": scale = 3600
                case "d": scale = 86_400
                default: return nil
                }
            }
            total += value * scale
            number = ""
            sawUnit = true
            index += 1
        }
        guard sawUnit, number.isEmpty else { return nil }
        self = .milliseconds(Int64((total * 1000).rounded()))
    }

    /// Seconds as a `Double`.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

import FoundationEssentials
