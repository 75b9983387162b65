/// Which regions lie near a point: a grid of cells 0.01 degree on a side (about 1.1 km north to
/// south), each listing the regions whose box touches it. A region covering more than 64 cells
/// (a few kilometres across, or near a pole or the antimeridian) is listed as wide and is a
/// candidate for every fix.
struct RegionGrid: Sendable {
    private static let cellSize = 0.01
    private static let mostCells = 64
    private var cells: [Int64: [Int]] = [:]
    private var wide: Set<Int> = []

    /// Lists `slot` in every cell its `box` touches.
    mutating func insert(_ slot: Int, box: BoundingBox) {
        guard let keys = Self.keys(of: box) else { return _ = wide.insert(slot) }
        for key in keys { cells[key, default: []].append(slot) }
    }

    /// Takes `slot` out of the cells of `box`.
    mutating func remove(_ slot: Int, box: BoundingBox) {
        guard let keys = Self.keys(of: box) else { return _ = wide.remove(slot) }
        for key in keys {
            cells[key]?.removeAll { $0 == slot }
            if cells[key]?.isEmpty == true { cells[key] = nil }
        }
    }

    /// The regions whose box may touch `box`, each once (wide ones included); `nil` for every
    /// region (a box near a pole or the antimeridian).
    func candidates(near box: BoundingBox) -> Set<Int>? {
        guard let keys = Self.keys(of: box) else { return nil }
        var found = wide
        for key in keys { found.formUnion(cells[key] ?? []) }
        return found
    }

    /// The cells `box` touches, or `nil` when it touches too many (or is the world).
    private static func keys(of box: BoundingBox) -> [Int64]? {
        guard !box.isWorld else { return nil }
        let south = Int64((box.minLatitude / cellSize).rounded(.down))
        let north = Int64((box.maxLatitude / cellSize).rounded(.down))
        let west = Int64((box.minLongitude / cellSize).rounded(.down))
        let east = Int64((box.maxLongitude / cellSize).rounded(.down))
        guard (north - south + 1) * (east - west + 1) <= mostCells else { return nil }
        var keys: [Int64] = []
        for row in south...north {
            for column in west...east { keys.append(row << 32 | (column & 0xFFFF_FFFF)) }
        }
        return keys
    }
}
