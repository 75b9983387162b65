/// Callbacks of the CoreLocation-shaped facade, named as `CLLocationManagerDelegate`'s.
///
/// Every callback arrives on the main actor, where an app's delegate lives: CoreLocation calls
/// its delegate on the thread the manager was created on, in practice the main one. A
/// `@MainActor` class (a view model, an app delegate) conforms as it is; any other class can
/// conform with `nonisolated` methods, which then run on the main thread too. The main actor
/// must be free to run them: a program with an `async` main (`@main` with `static func main()
/// async`, or top-level `await`) is, one that blocks its main thread is not.
@MainActor
public protocol LocationManagerDelegate: AnyObject, Sendable {
    /// New fixes, oldest first.
    func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location])
    /// A request failed, or the update stream ended with an error.
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error)
    /// A status change: connected, reconnecting, fix lost, paused, resumed.
    func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus)
    /// The app's authorization changed; read it from `manager.authorization`. As in
    /// CoreLocation, called once with the current status when the delegate is set (where
    /// CoreLocation calls it when the manager is made), then on every change, whether or not
    /// updates are running: the place to start them once allowed.
    func locationManagerDidChangeAuthorization(_ manager: LocationManager)
}

extension LocationManagerDelegate {
    /// Does nothing unless implemented.
    public func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {}
    /// Does nothing unless implemented.
    public func locationManagerDidChangeAuthorization(_ manager: LocationManager) {}
}

/// The CoreLocation-shaped facade, so code written for `CLLocationManager` ports line by line:
///
/// ```swift
/// manager.delegate = self
/// manager.desiredAccuracy = 10
/// manager.startUpdatingLocation()
/// ```
extension LocationManager {
    struct Facade {
        weak var delegate: (any LocationManagerDelegate)?
        var desiredAccuracy: Double?
        var distanceFilter: Double?
        var updating: Task<Void, Never>?
        /// The last call of `locationManagerDidChangeAuthorization` queued: the next waits for it.
        var authorizationCalls: Task<Void, Never>?
    }

    /// Receives the facade's callbacks; held weakly, as in CoreLocation. Setting one tells it
    /// the current authorization (`locationManagerDidChangeAuthorization`), on the main actor.
    public var delegate: (any LocationManagerDelegate)? {
        get { facade.withLock { $0.delegate } }
        set {
            facade.withLock { $0.delegate = newValue }
            guard newValue != nil, authorization != nil else { return }
            watchAuthorization()
            tellDelegateOfAuthorization()
        }
    }

    /// Tells the delegate of an authorization change, on the main actor, in order.
    func tellDelegateOfAuthorization() {
        facade.withLock { facade in
            guard facade.delegate != nil else { return }
            let previous = facade.authorizationCalls
            facade.authorizationCalls = Task { @MainActor [weak self] in
                await previous?.value
                guard let self else { return }
                self.delegate?.locationManagerDidChangeAuthorization(self)
            }
        }
    }

    /// Metres; `nil` takes every fix. Applies from the next `startUpdatingLocation()` or `requestLocation()`.
    public var desiredAccuracy: Double? {
        get { facade.withLock { $0.desiredAccuracy } }
        set { facade.withLock { $0.desiredAccuracy = newValue } }
    }

    /// Metres between delivered fixes; `nil` delivers every fix.
    public var distanceFilter: Double? {
        get { facade.withLock { $0.distanceFilter } }
        set { facade.withLock { $0.distanceFilter = newValue } }
    }

    /// Starts delivering fixes to the delegate, on the main actor, until ``stopUpdatingLocation()``.
    /// As in CoreLocation, a denial is told (`didFailWithError`, a `notAuthorized`
    /// ``LocationError``) and the updates stay started: they resume by themselves when access
    /// returns (another process's `keepalive auth set always`, a prompt answered).
    public func startUpdatingLocation() {
        let filter = facade.withLock {
            LocationFilter(desiredAccuracy: $0.desiredAccuracy, distanceFilter: $0.distanceFilter)
        }
        let updates = self.updates(filter, holdingTheManager: false)
        // Iterated on the main actor: the delegate is called there, in order, one call at a time.
        let task = Task { @MainActor [weak self] in
            do {
                for try await update in updates {
                    guard let self, let delegate = self.delegate else { continue }
                    switch update {
                    case .location(let location): delegate.locationManager(self, didUpdateLocations: [location])
                    case .status(.authorizationChanged): break  // told by the manager's own watch, updating or not
                    case .status(let status): delegate.locationManager(self, didChangeStatus: status)
                    }
                }
            } catch {
                guard let manager = self else { return }
                manager.delegate?.locationManager(manager, didFailWithError: error)
                guard (error as? LocationError)?.code == .notAuthorized, let authorization = manager.authorization else { return }
                await Self.resumeWhenAccessReturns(authorization) { [weak self] in self }
            }
        }
        facade.withLock { facade in
            facade.updating?.cancel()
            facade.updating = task
        }
    }

    /// Waits, until cancelled (``stopUpdatingLocation()``) or the manager is gone, for access to
    /// return after a denial, then starts the updates again.
    @MainActor
    private static func resumeWhenAccessReturns(
        _ authorization: LocationAuthorizationManager, manager: @escaping @MainActor () -> LocationManager?
    ) async {
        let changes = authorization.changes()
        // Access may have returned between the denial and the watch.
        if let current = manager(), !current.access.isDenied { return current.startUpdatingLocation() }
        for await _ in changes {
            guard !Task.isCancelled, let current = manager() else { return }
            if !current.access.isDenied { return current.startUpdatingLocation() }
        }
    }

    /// Stops the updates started by ``startUpdatingLocation()``.
    public func stopUpdatingLocation() {
        facade.withLock { facade in
            facade.updating?.cancel()
            facade.updating = nil
        }
    }

    /// Requests one fix and calls the delegate once, on the main actor, with the fix or the
    /// error (30 s timeout).
    public func requestLocation() {
        let accuracy = desiredAccuracy
        Task { @MainActor [weak self] in
            guard let self else { return }
            do {
                let location = try await self.requestLocation(desiredAccuracy: accuracy, timeout: .seconds(30))
                self.delegate?.locationManager(self, didUpdateLocations: [location])
            } catch {
                self.delegate?.locationManager(self, didFailWithError: error)
            }
        }
    }
}
