/// Whether fixes may reach the app now, from its authorization and its state.
public enum LocationAccess: Sendable, Hashable {
    /// Deliver, rounded to the reduced-accuracy grid if `reduced`.
    case deliver(reduced: Bool)
    /// Hold fixes back, for this reason, until the app returns to the foreground or is upgraded.
    case paused(String)
    /// Refuse: updates and one-shots fail with this error.
    case denied(LocationError)

    /// Whether fixes are refused (``denied(_:)``): not while delivered or paused.
    public var isDenied: Bool {
        if case .denied = self { true } else { false }
    }

    /// The access an app has.
    ///
    /// | status | active / inactive | background / suspended |
    /// |---|---|---|
    /// | not determined, restricted, denied, or services off | denied | denied |
    /// | when in use | fixes | paused (fixes with a background activity session) |
    /// | always | fixes | fixes |
    public static func decide(
        _ snapshot: AuthorizationSnapshot,
        appState: AppState,
        holdsBackgroundSession: Bool = false
    ) -> LocationAccess {
        let reduced = snapshot.accuracy == .reduced
        guard snapshot.locationServicesEnabled else {
            return .denied(
                LocationError(
                    .notAuthorized,
                    "location services are off on this machine (system policy)"
                        + (snapshot.problem.map { ": \($0.message)" } ?? "")
                )
            )
        }
        switch snapshot.status {
        case .always:
            return .deliver(reduced: reduced)
        case .whenInUse:
            if snapshot.status.allowsLocation(in: appState) || holdsBackgroundSession { return .deliver(reduced: reduced) }
            return .paused("when-in-use authorization: no fixes while \(snapshot.application) is in the background")
        case .notDetermined, .denied, .restricted:
            var message = "location is \(snapshot.status) for \(snapshot.application)"
            if let problem = snapshot.problem { message += ": \(problem.message)" }
            switch snapshot.status {
            case .notDetermined:
                message += "; ask with its LocationAuthorizationManager's requestWhenInUseAuthorization() "
                    + "(or requestAlwaysAuthorization(); from a shell: keepalive auth request when-in-use)"
            case .denied where snapshot.requestedAlways:
                message += "; the user can allow always with setStatus(.always) on its LocationAuthorizationManager "
                    + "(from a shell: keepalive auth set always --app \(snapshot.application))"
            case .denied:
                message += "; the user can allow it with setStatus(.whenInUse) on its LocationAuthorizationManager "
                    + "(from a shell: keepalive auth set when-in-use --app \(snapshot.application))"
            default: message += "; the system policy restricts it"
            }
            return .denied(LocationError(.notAuthorized, message))
        }
    }
}
