import KeepAliveCore

/// GeoClue2's accuracy levels (`GClueAccuracyLevel`), and what each below exact is given.
public enum GeoClueAccuracy: UInt32, Sendable, Comparable, CaseIterable {
    /// Nothing asked (read as country, as GeoClue does).
    case none = 0
    /// The country: a 3° cell.
    case country = 1
    /// The city: a 0.1° cell.
    case city = 4
    /// The neighbourhood: a 0.05° cell.
    case neighborhood = 5
    /// The street: a 0.01° cell, as the store's reduced accuracy.
    case street = 6
    /// gpsd's fix as it is.
    case exact = 8

    /// Coarser first.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level a requested number means, as GeoClue reads one: a number between two levels
    /// is the coarser (7 is street), and above exact is exact.
    public init(requested value: UInt32) {
        self = Self.allCases.last { $0.rawValue <= value } ?? .none
    }

    /// The side of the grid cell a position is snapped to, in degrees (`nil`: exact). About
    /// the radius GeoClue's own sources give at that level: street 0.01° (1.1 km north-south,
    /// the grid of the store's reduced accuracy, as iOS 14's approximate location), neighborhood
    /// 0.05° (5.5 km), city 0.1° (11 km), country 3° (330 km).
    public var grid: Double? {
        switch self {
        case .exact: nil
        case .street: LocationAccuracyAuthorization.reducedGrid
        case .neighborhood: 0.05
        case .city: 0.1
        case .country, .none: 3
        }
    }

    /// The `Accuracy` a coarsened location carries, in metres: GeoClue's street (1 km), city
    /// (15 km) and country (300 km) figures, and 5 km for a neighbourhood.
    public var meters: Double? {
        switch self {
        case .exact: nil
        case .street: 1_000
        case .neighborhood: 5_000
        case .city: 15_000
        case .country, .none: 300_000
        }
    }
}

/// Where the device is at one coarse level: a cell of the level's grid, the same for every
/// client, which moves only when the device has gone a quarter of a cell beyond it.
///
/// Rounding each fix would flicker between two cells while a parked device's fixes wander
/// across their border, and the share of fixes on each side would tell how far from it the
/// device is: averaged, the exact position again. With the margin, a device that stays put
/// keeps one cell; only a real move of at least a quarter cell changes it.
struct CoarsePosition: Sendable {
    let grid: Double
    /// The cell reported now (row, column), once there was a fix.
    private(set) var cell: (row: Int, column: Int)?

    init(grid: Double) { self.grid = grid }

    /// Takes `fix` into account; returns whether the cell changed.
    mutating func update(with fix: Location) -> Bool {
        let row = fix.latitude / grid
        let column = fix.longitude / grid
        guard let current = cell else {
            cell = (Int(row.rounded(.down)), Int(column.rounded(.down)))
            return true
        }
        let margin = 0.25
        let outside =
            row < Double(current.row) - margin || row >= Double(current.row + 1) + margin
            || column < Double(current.column) - margin || column >= Double(current.column + 1) + margin
        guard outside else { return false }
        cell = (Int(row.rounded(.down)), Int(column.rounded(.down)))
        return true
    }

    /// The cell's centre as a location: no altitude, speed or heading.
    func location(like fix: Location, accuracy meters: Double) -> Location? {
        guard let cell else { return nil }
        var location = Location(
            latitude: min(90, max(-90, (Double(cell.row) + 0.5) * grid)),
            longitude: (Double(cell.column) + 0.5) * grid,
            mode: fix.mode
        )
        location.horizontalAccuracy = meters
        location.timestamp = fix.timestamp
        return location
    }
}
