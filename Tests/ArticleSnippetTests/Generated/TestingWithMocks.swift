// The Swift snippets of TestingWithMocks.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import FoundationEssentials
import LocationKeepAlive
import LocationKeepAliveMocks
import Testing

@MainActor func testingWithMocksSnippet1() async throws {
    let source = ScriptedLocationSource()
    let manager = LocationManager(source: source)
    let updates = manager.updates()
    await source.waitForSessions(1)
    source.sendFix(latitude: 52.1, longitude: 4.3, accuracy: 5, at: Date())
    source.sendNoFix()
    source.finish()
    for try await update in updates { print(update) }  // the fix, then .status(.fixLost)
}

@Test(.timeLimit(.minutes(5))) @MainActor func fixesByHandEndWithTheScript() async throws {
    try await testingWithMocksSnippet1()
}

@MainActor func testingWithMocksSnippet2() async throws {
    let replay = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 0)  // as fast as possible
    let fix = try await LocationManager(source: replay).requestLocation(maximumAge: .seconds(1), timeout: .seconds(5))
    print(fix.timestamp ?? .distantPast)  // 2017: ages are measured on the replay's own clock
}

@Test(.timeLimit(.minutes(5))) @MainActor func aReplayAnswersAOneShotOnItsOwnClock() async throws {
    try await testingWithMocksSnippet2()
}

@MainActor func testingWithMocksSnippet3() async throws {
    let source = ScriptedLocationSource()
    let updates = LocationManager(source: source).updates(LocationFilter(whenTimeGoesBack: .skip))
    await source.waitForSessions(1)
    let start = Date()
    source.sendFix(latitude: 52.1, longitude: 4.3, accuracy: 5, at: start + 60)
    source.sendFix(latitude: 52.1, longitude: 4.3, accuracy: 5, at: start)       // a minute back: the log looped
    source.sendFix(latitude: 52.1, longitude: 4.3, accuracy: 5, at: start + 30)  // still behind: skipped
    source.sendFix(latitude: 52.1, longitude: 4.3, accuracy: 5, at: start + 61)  // past the newest again
    source.finish()
    var seen: [String] = []
    for try await update in updates {
        switch update {
        case .location(let fix): seen.append("fix at +\(Int(fix.timestamp!.timeIntervalSince(start))) s")
        case .status(.receiverTimeWentBack(let from, let to)): seen.append("back \(Int(from.timeIntervalSince(to))) s")
        case .status(let status): seen.append("\(status)")
        }
    }
    #expect(seen == ["fix at +60 s", "back 60 s", "fix at +61 s"])  // said once; each time delivered once, in order
}

@Test(.timeLimit(.minutes(5))) @MainActor func aReceiverTimeGoingBackIsSaidAndSkipped() async throws {
    try await testingWithMocksSnippet3()
}

@MainActor func testingWithMocksSnippet4() async throws {
    let gpsd = try MockGPSD(scripts: [
        [.tpv(latitude: 52.1, longitude: 4.3, time: Date()), .malformedJSON],  // first connection
        [.stall],                                                              // every one after it
    ])
    let manager = LocationManager(source: GPSDSource(host: "127.0.0.1", port: gpsd.port))
    for try await update in manager.updates().prefix(4) { print(update) }  // connected, the fix, the connection lost, reconnecting
}

@Test(.timeLimit(.minutes(5))) @MainActor func aMockGPSDMisbehavesAsScripted() async throws {
    try await testingWithMocksSnippet4()
}

@MainActor func testingWithMocksSnippet5() async throws {
    let gpsd = try MockGPSD(scripts: [[.tpv(latitude: 52.1, longitude: 4.3, time: Date())]])
    let clock = ManualClock()
    let source = GPSDSource(host: "127.0.0.1", port: gpsd.port, silenceTimeout: .seconds(1), clock: clock)
    var updates = LocationManager(source: source).updates().makeAsyncIterator()
    #expect(try await updates.next() == .status(.connected("gpsd 3.22-mock at 127.0.0.1:\(gpsd.port)")))
    // ... after the last message, the source waits for one second of silence:
    #expect(await clock.waitForSleeper(wakingAt: .seconds(1)), "the clock's sleepers: \(clock.wakes)")
    await clock.advance(to: .seconds(1))  // now the connection is lost, "no data for 1 s"
}

@Test(.timeLimit(.minutes(5))) @MainActor func aSilenceTimeoutOnAManualClock() async throws {
    try await testingWithMocksSnippet5()
}

@MainActor func testingWithMocksSnippet6() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
    let authorization = LocationAuthorizationManager(
        application: "tracker",
        file: AuthorizationFile(url: folder.appendingPathComponent("tracker.json")),
        prompt: ScriptedAuthorizationPrompt(answers: [.whenInUse, .always])
    )
    #expect(try await authorization.requestWhenInUseAuthorization() == .whenInUse)
    #expect(try await authorization.requestAlwaysAuthorization() == .always)  // the one upgrade prompt
}

@Test(.timeLimit(.minutes(5))) @MainActor func aScriptedPromptAnswersInOrder() async throws {
    try await testingWithMocksSnippet6()
}

@MainActor func testingWithMocksSnippet7() async throws {
    struct SettingsPrompt: AuthorizationPrompt {
        let allowsBackground: Bool
        func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer? {
            allowsBackground && question.choices.contains(.always) ? .always : .whenInUse
        }
    }
    let tracker = LocationAuthorizationManager(application: "tracker", prompt: FixedAuthorizationPrompt(.always))
    let viewer = LocationAuthorizationManager(application: "viewer", prompt: SettingsPrompt(allowsBackground: false))
    print(try await tracker.requestAlwaysAuthorization(), try await viewer.requestAlwaysAuthorization())
}

@Test(.timeLimit(.minutes(5))) @MainActor func aFixedPromptAnswersUpFront() async throws {
    try await testingWithMocksSnippet7()
}

@MainActor func testingWithMocksSnippet8() async throws {
    let receiver = try HTTPReceiver { _, number in number == 3 ? .status(400) : .status(200) }
    let destination = try Destination(name: "recorder", url: "owntracks+http://127.0.0.1:\(receiver.port)/pub?tid=kt")
    let journal = try FixJournal(file: FileManager.default.temporaryDirectory.appendingPathComponent("journal.sqlite"))
    let delivery = try JournalDelivery(journal: journal, destinations: [destination])
    Task { await delivery.run() }  // the third request is refused, the others acknowledged
}

@MainActor func testingWithMocksSnippet9() async throws {
    let monitor = try LocationMonitor(named: "boat")  // no file: in memory
    let harbour = Coordinate(latitude: 52.850155, longitude: 5.3136167)
    try monitor.add(.circle(center: harbour, radius: 300), identifier: "harbour", assuming: .unsatisfied)
    var events = monitor.events.makeAsyncIterator()
    let replay = NMEAReplaySource(file: NMEAFixture("bundg_zeus_9.log", folder: "tracks").url, speed: 0)
    try await monitor.monitor(LocationManager(source: replay))  // returns at the log's end
    #expect(await events.next()?.state == .satisfied)  // the boat came into the harbour
}

@Test(.timeLimit(.minutes(5))) @MainActor func aMonitorOverAReplayReturnsAtTheLogsEnd() async throws {
    try await testingWithMocksSnippet9()
}

@MainActor func testingWithMocksSnippet10() async throws {
    let clock = ManualClock()
    let source = ScriptedLocationSource()
    let monitor = try LocationMonitor(named: "home", clock: clock)
    try monitor.add(.circle(center: Coordinate(latitude: 52.0, longitude: 5.0), radius: 100), identifier: "home", assuming: .unsatisfied)
    var events = monitor.events.makeAsyncIterator()
    let monitoring = Task { try await monitor.monitor(LocationManager(source: source, clock: clock)) }
    await source.waitForSessions(1)
    let now = Date()
    source.sendFix(latitude: 52.0, longitude: 5.0, accuracy: 5, at: now)
    source.sendFix(latitude: 52.0, longitude: 5.0, accuracy: 5, at: now + 1)  // two fixes well inside: entered
    #expect(await events.next()?.state == .satisfied)
    source.finish()
    try await monitoring.value  // the script ended, and so did the monitor
}

@Test(.timeLimit(.minutes(5))) @MainActor func aMonitorOverAScriptOnAManualClockEndsWithTheScript() async throws {
    try await testingWithMocksSnippet10()
}
