public import FoundationEssentials
public import Logging

/// One application's location authorization: persisted, observable across processes, and
/// requested with CoreLocation's rules.
///
/// ```swift
/// let authorization = LocationAuthorizationManager(application: "com.example.tracker", prompt: myPrompt)
/// let status = try await authorization.requestAlwaysAuthorization()
/// for await change in authorization.changes() { print(change.status) }  // another process ran `keepalive auth set`
/// ```
public final class LocationAuthorizationManager: Sendable {
    /// The application whose authorization this is.
    public let application: String
    /// Where it is stored.
    public let file: AuthorizationFile
    /// The machine's location policy file.
    public let policyURL: URL
    let prompt: any AuthorizationPrompt
    let time: TimeSource
    let logger: Logger
    /// How long an "allow once" grant survives the app being in the background.
    public let temporaryGrantLifetime: Duration

    let state: Locked<State>

    struct State {
        var record: AuthorizationRecord
        var problem: AuthorizationError?
        var policy = SystemLocationPolicy()
        var policyProblem: AuthorizationError?
        var backgroundSince: Duration?
        var delegates: [Int: @Sendable (AuthorizationSnapshot) -> Void] = [:]
        var lastDelegateID = 0
        /// This process's commits begun and not yet in ``record``, and those ended: a re-read
        /// that began before or during one may have read the file before its rename, and would
        /// put the older record back (``reload()`` drops it; the rename's own event re-reads).
        var commitsInFlight = 0
        var commitsEnded = 0
        /// Re-reads begun, and the last whose read was applied: two at once (the folder's watch
        /// and the poll, or two streams' watches) read the file in one order and could apply in
        /// the other, putting an older status back after a newer one until the next change (a
        /// stream reported the old status between two changes, 2 tries of 4, issue 86). A
        /// re-read begun before the one last applied is dropped; a change after it has its own.
        var reloadsBegun = 0
        var lastReloadApplied = 0
        /// Whether the app asked this manager for always: a denial then says how to allow always.
        var requestedAlways = false
    }

    /// The authorization of one application.
    ///
    /// - Parameters:
    ///   - application: the application identifier (its record is `APP.json`).
    ///   - file: where the record lives; the default follows `$XDG_CONFIG_HOME`.
    ///   - policyURL: the system policy file.
    ///   - prompt: asks the user; by default nobody answers and the status stays not determined.
    ///   - temporaryGrantLifetime: how long an "allow once" grant lasts in the background.
    ///   - clock: times change polling and "allow once" expiry.
    ///   - logger: where changes and damaged files are logged.
    public init(
        application: String,
        file: AuthorizationFile? = nil,
        policyURL: URL = SystemLocationPolicy.defaultURL,
        prompt: any AuthorizationPrompt = NoAuthorizationPrompt(),
        temporaryGrantLifetime: Duration = .seconds(60),
        clock: some Clock<Duration> = DispatchClock(),
        logger: Logger = Logger(label: "LocationKeepAlive.authorization")
    ) {
        self.application = application
        self.file = file ?? .defaultFile(for: application)
        self.policyURL = policyURL
        self.prompt = prompt
        self.temporaryGrantLifetime = temporaryGrantLifetime
        self.time = TimeSource(clock)
        self.logger = logger
        self.state = Locked(State(record: AuthorizationRecord(application: application)))
        _ = reload()
    }

    // MARK: Reading

    /// Everything known now (an "allow once" grant that is due ends here, before it is read).
    public var snapshot: AuthorizationSnapshot {
        expireTemporaryGrantIfDue()
        return state.withLock { $0.snapshot(application: application) }
    }

    /// The effective status: `restricted` when the system policy says so, else the stored one.
    public var status: LocationAuthorization { snapshot.status }

    /// Re-reads the files; returns the new snapshot if anything changed. A re-read while this
    /// process commits a change changes nothing: the file may still hold the older record.
    @discardableResult
    public func reload() -> AuthorizationSnapshot? {
        read().flatMap(apply)
    }

    /// What one re-read found, with its place among this process's commits and re-reads.
    struct Reread {
        let commitsEnded: Int
        let ticket: Int
        let policy: (policy: SystemLocationPolicy, problem: AuthorizationError?)
        let record: Result<AuthorizationRecord?, AuthorizationError>
    }

    /// Reads the files, unless this process is committing (nil then).
    func read() -> Reread? {
        let begun = state.withLock { state -> (commits: Int, reload: Int)? in
            guard state.commitsInFlight == 0 else { return nil }
            state.reloadsBegun += 1
            return (state.commitsEnded, state.reloadsBegun)
        }
        guard let (began, ticket) = begun else { return nil }
        let policy = SystemLocationPolicy.load(from: policyURL)
        let record = Result { () throws(AuthorizationError) in try file.load() }
        return Reread(commitsEnded: began, ticket: ticket, policy: policy, record: record)
    }

    /// Takes what a re-read found, unless a commit began or ended since it began or a later
    /// re-read was taken first (it may be older than what is known).
    func apply(_ reread: Reread) -> AuthorizationSnapshot? {
        update { state in
            guard state.commitsInFlight == 0, state.commitsEnded == reread.commitsEnded,
                reread.ticket > state.lastReloadApplied
            else { return }
            state.lastReloadApplied = reread.ticket
            (state.policy, state.policyProblem) = reread.policy
            switch reread.record {
            case .success(let record):
                state.problem = nil
                state.record = record ?? AuthorizationRecord(application: application)  // no file: not determined
            case .failure(let problem):
                state.problem = problem
                state.record = AuthorizationRecord(application: application)  // reads as not determined
            }
        }
    }

    // MARK: Requests (the app)

    /// Asks for when-in-use access: prompts only from not determined.
    @discardableResult
    public func requestWhenInUseAuthorization() async throws(AuthorizationError) -> LocationAuthorization {
        try await request(.whenInUse)
    }

    /// Asks for always access: prompts from not determined, and once from when in use (the upgrade).
    ///
    /// Once the user decided (denied, or when in use after the upgrade was asked), it returns
    /// that status without a prompt, as CoreLocation does, and logs a warning with how to allow
    /// always; a refusal of fixes then says the same (``AuthorizationSnapshot/requestedAlways``).
    @discardableResult
    public func requestAlwaysAuthorization() async throws(AuthorizationError) -> LocationAuthorization {
        try await request(.always)
    }

    private func request(
        _ request: AuthorizationRules.Request
    ) async throws(AuthorizationError) -> LocationAuthorization {
        reload()
        let (record, problem, policy) = state.withLock { state in
            if request == .always { state.requestedAlways = true }
            return (state.record, state.problem, state.policy)
        }
        if let problem { throw problem }
        if policy.restrictedApplications.contains(application) { return .restricted }
        guard let question = AuthorizationRules.question(for: request, record: record) else {
            if record.status == .denied || (request == .always && record.status == .whenInUse) {
                // As CoreLocation, no prompt once decided; but said, with what would allow it.
                let wanted: LocationAuthorization = request == .always ? .always : .whenInUse
                let how = Self.howToAllow(wanted, application: application, file: file)
                logger.warning(
                    "location stays \(record.status) for \(application): the user decided it, and a request does not ask again; to allow \(wanted): \(how)"
                )
            } else {
                logger.debug("authorization request changes nothing", metadata: ["status": "\(record.status)"])
            }
            return status
        }
        guard let answer = await prompt.ask(question, application: application) else {
            throw AuthorizationError(
                .noAnswer,
                "nobody answered the location prompt for \(application); the status stays \(record.status). "
                    + "Give the manager a prompt that answers (FixedAuthorizationPrompt, or your own AuthorizationPrompt) "
                    + "or set the status with setStatus(_:) (from a shell: --answer, or keepalive auth set)"
            )
        }
        var updated = AuthorizationRules.apply(answer, to: question, record: record)
        updated.updated = Date()
        try commit(updated)
        return status
    }

    /// What allows `status` once the user decided otherwise: in words, for messages.
    static func howToAllow(_ status: LocationAuthorization, application: String, file: AuthorizationFile) -> String {
        let (call, word) = status == .always ? ("always", "always") : ("whenInUse", "when-in-use")
        return "setStatus(.\(call)) on its LocationAuthorizationManager (from a shell: keepalive auth set \(word) "
            + "--app \(application)), or remove \(file.url.path) to be asked again"
    }

    // MARK: Settings (the user, or the CLI)

    /// Sets the status as the user would in Settings. `restricted` comes from the system policy only.
    public func setStatus(
        _ status: LocationAuthorization,
        accuracy: LocationAccuracyAuthorization? = nil
    )
        throws(AuthorizationError)
    {
        guard status != .restricted else {
            throw AuthorizationError(
                .restricted,
                "restricted is set by the system policy (\(policyURL.path)), not per application"
            )
        }
        if let problem = state.withLock({ $0.problem }) { throw problem }
        var record = state.withLock { $0.record }
        record.status = status
        record.isTemporary = false
        if let accuracy { record.accuracy = accuracy }
        if status == .notDetermined { record.alwaysPromptShown = false }
        record.updated = Date()
        try commit(record)
    }

    /// Forgets the decision: removes the file, even a damaged one. Status: not determined.
    public func reset() throws(AuthorizationError) {
        try file.remove()
        reload()
    }

    private func commit(_ record: AuthorizationRecord) throws(AuthorizationError) {
        state.withLock { $0.commitsInFlight += 1 }
        do {
            try file.save(record)
        } catch {
            state.withLock { $0.commitsInFlight -= 1; $0.commitsEnded += 1 }
            throw error
        }
        _ = update { state in
            state.commitsInFlight -= 1
            state.commitsEnded += 1
            state.record = record
            state.problem = nil
        }
    }

    // MARK: "Allow once" and the app's life

    /// Tells the manager where the app is, for "allow once": the grant ends when the app has been
    /// in the background for ``temporaryGrantLifetime``, or terminates.
    public func applicationStateChanged(to appState: AppState) {
        let now = time.now()
        if appState == .notRunning {
            expireTemporaryGrant(reason: "the app terminated")
        } else if appState.isInForeground {
            state.withLock { $0.backgroundSince = nil }
        } else {
            state.withLock { if $0.backgroundSince == nil { $0.backgroundSince = now } }
        }
    }

    func expireTemporaryGrantIfDue() {
        let due = state.withLock { state in
            state.record.isTemporary && state.backgroundSince.map { time.now() - $0 >= temporaryGrantLifetime } == true
        }
        if due { expireTemporaryGrant(reason: "the app stayed in the background") }
    }

    private func expireTemporaryGrant(reason: String) {
        var record = state.withLock { $0.record }
        guard record.isTemporary else { return }
        logger.info("allow-once grant expired", metadata: ["reason": "\(reason)"])
        record.status = .notDetermined
        record.isTemporary = false
        record.updated = Date()
        do { try commit(record) } catch {
            logger.error("cannot expire allow-once grant", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Observation

    /// Changes from any process, from this one, and "allow once" expiry, until the consumer stops.
    ///
    /// Another process's change is seen at once through inotify on the two files' folders; the
    /// files are also re-read every `interval` as a safety net (file systems without inotify
    /// events), and an "allow once" grant is expired on time.
    public func changes(pollingEvery interval: Duration = .seconds(30)) -> AsyncStream<AuthorizationSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthorizationSnapshot.self)
        let id = addObserver { continuation.yield($0) }
        let monitor = FileChangeMonitor(files: [file.url.path, policyURL.path]) { [weak self] in
            self?.reload()
        }
        let poller = Task { [time] in
            while !Task.isCancelled {
                let wait = min(interval, self.timeUntilTemporaryGrantExpires() ?? interval)
                do { try await time.sleep(max(wait, .milliseconds(1))) } catch { break }
                self.expireTemporaryGrantIfDue()
                self.reload()
            }
        }
        continuation.onTermination = { [weak self] _ in
            poller.cancel()
            monitor?.stop()
            self?.removeObserver(id)
        }
        return stream
    }

    /// How long until a temporary grant ends, when one is running out in the background.
    private func timeUntilTemporaryGrantExpires() -> Duration? {
        state.withLock { state in
            guard state.record.isTemporary, let since = state.backgroundSince else { return nil }
            return since + temporaryGrantLifetime - time.now()
        }
    }

    /// Calls `observer` on every change (like `locationManagerDidChangeAuthorization`).
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (AuthorizationSnapshot) -> Void) -> Int {
        state.withLock { state in
            state.lastDelegateID += 1
            state.delegates[state.lastDelegateID] = observer
            return state.lastDelegateID
        }
    }

    /// Stops calling the observer numbered `id`.
    public func removeObserver(_ id: Int) { state.withLock { _ = $0.delegates.removeValue(forKey: id) } }

    /// Applies a change to the state and tells the observers if the snapshot changed.
    private func update(_ change: (inout State) -> Void) -> AuthorizationSnapshot? {
        let (changed, observers) = state.withLock {
            state -> (AuthorizationSnapshot?, [@Sendable (AuthorizationSnapshot) -> Void]) in
            let before = state.snapshot(application: application)
            change(&state)
            let after = state.snapshot(application: application)
            return (before == after ? nil : after, Array(state.delegates.values))
        }
        if let changed {
            logger.debug("authorization changed", metadata: ["status": "\(changed.status)"])
            for observer in observers { observer(changed) }
        }
        return changed
    }
}

/// Everything known about one application's authorization at one moment.
public struct AuthorizationSnapshot: Sendable, Hashable {
    /// The application.
    public var application: String
    /// The effective status (`restricted` when the system policy says so).
    public var status: LocationAuthorization
    /// Full or reduced accuracy.
    public var accuracy: LocationAccuracyAuthorization
    /// Whether location services are on for the whole machine.
    public var locationServicesEnabled: Bool
    /// Whether it is an allow-once grant, which ends in the background.
    public var isTemporary: Bool
    /// Whether the upgrade to always was already asked for (it is asked once).
    public var alwaysPromptShown: Bool
    /// A damaged file or policy, if any: the status reads as not determined (or services off) meanwhile.
    public var problem: AuthorizationError?
    /// Whether the app asked its manager for always (``LocationAuthorizationManager/requestAlwaysAuthorization()``):
    /// a denial then says how to allow always, not when in use.
    public var requestedAlways: Bool = false

    /// Whether fixes may be delivered at all.
    public var allowsLocation: Bool { locationServicesEnabled && status.allowsLocation }
}

extension LocationAuthorizationManager.State {
    func snapshot(application: String) -> AuthorizationSnapshot {
        AuthorizationSnapshot(
            application: application,
            status: policy.restrictedApplications.contains(application) ? .restricted : record.status,
            accuracy: record.accuracy,
            locationServicesEnabled: policy.locationServicesEnabled,
            isTemporary: record.isTemporary,
            alwaysPromptShown: record.alwaysPromptShown,
            problem: problem ?? policyProblem,
            requestedAlways: requestedAlways
        )
    }
}
