/// Lifecycle callbacks named like `UIApplicationDelegate`'s, for code ported from iOS.
public protocol ApplicationDelegate: AnyObject {
    func applicationDidFinishLaunching(_ application: Application)
    func applicationWillResignActive(_ application: Application)
    func applicationDidEnterBackground(_ application: Application)
    func applicationWillEnterForeground(_ application: Application)
    func applicationDidBecomeActive(_ application: Application)
    func applicationWillTerminate(_ application: Application)
    /// The policy stopped the app's code (iOS says nothing; logs want to know).
    func application(_ application: Application, didSuspendBecause cause: SuspensionCause)
    func applicationDidResume(_ application: Application)
    func application(_ application: Application, wasTerminatedBecause reason: TerminationReason)
}

extension ApplicationDelegate {
    public func applicationDidFinishLaunching(_ application: Application) {}
    public func applicationWillResignActive(_ application: Application) {}
    public func applicationDidEnterBackground(_ application: Application) {}
    public func applicationWillEnterForeground(_ application: Application) {}
    public func applicationDidBecomeActive(_ application: Application) {}
    public func applicationWillTerminate(_ application: Application) {}
    public func application(_ application: Application, didSuspendBecause cause: SuspensionCause) {}
    public func applicationDidResume(_ application: Application) {}
    public func application(_ application: Application, wasTerminatedBecause reason: TerminationReason) {}
}

extension Application {
    func notifyDelegate(_ event: AppEvent) {
        guard let delegate else { return }
        switch event {
        case .didFinishLaunching: delegate.applicationDidFinishLaunching(self)
        case .willResignActive: delegate.applicationWillResignActive(self)
        case .didEnterBackground: delegate.applicationDidEnterBackground(self)
        case .willEnterForeground: delegate.applicationWillEnterForeground(self)
        case .didBecomeActive: delegate.applicationDidBecomeActive(self)
        case .willTerminate: delegate.applicationWillTerminate(self)
        case .suspended(let cause): delegate.application(self, didSuspendBecause: cause)
        case .resumed: delegate.applicationDidResume(self)
        case .terminated(let reason): delegate.application(self, wasTerminatedBecause: reason)
        case .scheduledTaskStarted, .scheduledTaskEnded: break  // the task handler hears of these
        }
    }
}
