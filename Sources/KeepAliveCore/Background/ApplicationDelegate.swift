/// Lifecycle callbacks named like `UIApplicationDelegate`'s, for code ported from iOS.
public protocol ApplicationDelegate: AnyObject {
    /// The application launched (it becomes active next).
    func applicationDidFinishLaunching(_ application: Application)
    /// The application is about to leave the foreground.
    func applicationWillResignActive(_ application: Application)
    /// The application is in the background: its background time starts.
    func applicationDidEnterBackground(_ application: Application)
    /// The application is about to come back to the foreground.
    func applicationWillEnterForeground(_ application: Application)
    /// The application is active in the foreground.
    func applicationDidBecomeActive(_ application: Application)
    /// The application is about to end (a user quit it, or the service stops).
    func applicationWillTerminate(_ application: Application)
    /// The policy stopped the app's code (iOS says nothing; logs want to know).
    func application(_ application: Application, didSuspendBecause cause: SuspensionCause)
    /// A suspended application runs again (back to the foreground, or woken for work).
    func applicationDidResume(_ application: Application)
    /// The system ended the application, and why.
    func application(_ application: Application, wasTerminatedBecause reason: TerminationReason)
}

extension ApplicationDelegate {
    /// Does nothing unless implemented.
    public func applicationDidFinishLaunching(_ application: Application) {}
    /// Does nothing unless implemented.
    public func applicationWillResignActive(_ application: Application) {}
    /// Does nothing unless implemented.
    public func applicationDidEnterBackground(_ application: Application) {}
    /// Does nothing unless implemented.
    public func applicationWillEnterForeground(_ application: Application) {}
    /// Does nothing unless implemented.
    public func applicationDidBecomeActive(_ application: Application) {}
    /// Does nothing unless implemented.
    public func applicationWillTerminate(_ application: Application) {}
    /// Does nothing unless implemented.
    public func application(_ application: Application, didSuspendBecause cause: SuspensionCause) {}
    /// Does nothing unless implemented.
    public func applicationDidResume(_ application: Application) {}
    /// Does nothing unless implemented.
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
