public import KeepAliveCore

/// A tracker written as an iOS app writes one: a `@MainActor` class adopting the delegate,
/// no `@preconcurrency`, no `nonisolated`. Its callbacks run on the main actor.
@MainActor public final class Tracker: LocationManagerDelegate {
    /// The manager it is the delegate of.
    public let manager: LocationManager
    /// The fixes delivered so far, oldest first.
    public private(set) var fixes: [Location] = []
    /// The errors the manager reported.
    public private(set) var errors: [String] = []
    /// Called with each fix as it arrives.
    public var onFix: (Location) -> Void = { _ in }
    /// Called at the start of every callback (the tests check where it runs).
    public var onCallback: () -> Void = {}
    private var ended = false
    private var waiter: CheckedContinuation<Void, Never>?

    /// A tracker of `source`'s fixes better than `desiredAccuracy` metres (`nil`: every fix).
    public init(source: any LocationSource, desiredAccuracy: Double? = nil) {
        manager = LocationManager(source: source)
        manager.desiredAccuracy = desiredAccuracy
    }

    /// Starts updating and returns the fixes once the source ends (a replay's end) or fails;
    /// against gpsd it goes on until the process ends.
    public func run() async -> [Location] {
        manager.delegate = self
        manager.startUpdatingLocation()
        if !ended { await withCheckedContinuation { waiter = $0 } }
        return fixes
    }

    public func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
        onCallback()
        fixes += locations
        locations.forEach(onFix)
    }

    public func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        onCallback()
        errors.append("\(error)")
        end()
    }

    public func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {
        onCallback()
        if case .replayFinished = status { end() }
    }

    private func end() {
        ended = true
        waiter?.resume()
        waiter = nil
    }
}
