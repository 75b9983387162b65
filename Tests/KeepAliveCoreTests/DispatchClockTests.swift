import KeepAliveCore
import Testing

/// The service's real clock: sleeps end at their deadline, and at once when cancelled.
@Suite struct DispatchClockTests {
    let clock = DispatchClock()

    @Test func aSleepEndsAtItsDeadlineNotBefore() async throws {
        let deadline = clock.now.advanced(by: .milliseconds(150))
        try await clock.sleep(until: deadline, tolerance: nil)
        #expect(clock.now >= deadline)
        let past = clock.now.advanced(by: .seconds(-1))
        try await clock.sleep(until: past, tolerance: nil)  // already due: returns at once
    }

    /// A sleep that ran to its deadline would return rather than throw; one that threw only at
    /// its deadline would take an hour. The bound catches that, not how quickly a test process
    /// busy with other tests gets round to it (under ThreadSanitizer, the whole suite on two
    /// threads once took 57 s to run the cancelled task again).
    @Test(.timeLimit(.minutes(10))) func aCancelledSleepThrowsAtOnce() async {
        let started = clock.now
        let sleeper = Task { [clock] in try await clock.sleep(for: .seconds(3600)) }
        try? await Task.sleep(for: .milliseconds(50))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(started.duration(to: clock.now) < .seconds(600), "not at its one-hour deadline")
    }

    /// Past what Dispatch counts in nanoseconds (about 292 years), and with a negative tolerance:
    /// a sleep like any other, ended by cancellation.
    @Test func anEndlessSleepIsCancelledLikeAnyOther() async {
        let sleeper = Task { [clock] in
            try await clock.sleep(until: clock.now.advanced(by: .seconds(Int64.max)), tolerance: .seconds(-1))
        }
        try? await Task.sleep(for: .milliseconds(50))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aSleepInACancelledTaskThrowsWithoutSleeping() async {
        let sleeper = Task { [clock] in
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    /// Cancellation racing the timer's start and its firing, many times: every sleep ends once
    /// (a continuation resumed twice, or a timer released unresumed, would trap).
    @Test func cancellationRacingTheTimerEndsEverySleepOnce() async {
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<2_000 {
                let sleeper = Task { [clock] in try await clock.sleep(for: .microseconds(index % 40)) }
                if index % 2 == 0 { sleeper.cancel() }
                group.addTask { (try? await sleeper.value) != nil }
            }
            var finished = 0
            for await _ in group { finished += 1 }
            return finished
        }
        #expect(outcomes == 2_000)
    }
}
