import Foundation
import LocationKeepAlive
import IntegrationSupport
import Testing

/// The broker behind a link the test cuts: a network namespace of the test's own, a veth
/// pair with addresses of its own, the link down for minutes, then up.
@Suite struct NetworkCutTests {
    /// A namespace of the test's own with one end of a veth pair; the other end in the test's namespace.
    final class Link {
        let space: NetworkNamespace
        let outside: String
        let hostAddress: String
        let brokerAddress: String

        var namespace: String { space.name }

        init() async throws {
            space = try await NetworkNamespace()
            let tag = String(UUID().uuidString.prefix(4)).lowercased()
            let subnet = Int.random(in: 1...250)
            outside = "ka\(tag)a"
            hostAddress = "10.201.\(subnet).1"
            brokerAddress = "10.201.\(subnet).2"
            let inside = "ka\(tag)b"
            for command in [
                ["link", "add", outside, "type", "veth", "peer", "name", inside],
                ["link", "set", inside, "netns", space.name],
                ["addr", "add", "\(hostAddress)/30", "dev", outside],
                ["link", "set", outside, "up"],
                ["-n", space.name, "addr", "add", "\(brokerAddress)/30", "dev", inside],
                ["-n", space.name, "link", "set", inside, "up"],
            ] {
                let result = try await runCommand("/usr/sbin/ip", command)
                guard result.exitCode == 0 else {
                    throw ToolMissing(
                        "ip \(command.joined(separator: " ")) failed (the network-cut test needs root and iproute2; "
                            + "CI runs as root): \(result.error)"
                    )
                }
            }
        }

        func set(up: Bool) async throws {
            let result = try await runCommand("/usr/sbin/ip", ["link", "set", outside, up ? "up" : "down"])
            guard result.exitCode == 0 else { throw ToolMissing("ip link set \(outside) failed: \(result.error)") }
        }

        deinit {
            // The namespace goes with `space` (and the veth pair's inner end with it).
            runToEnd("/usr/sbin/ip", ["link", "delete", outside])
        }
    }

    /// Down for `KEEPALIVE_NETWORK_CUT_SECONDS` (default 120) while the service keeps
    /// journaling: when the link is back, the backlog goes and nothing is lost.
    @Test func theLinkCutForMinutesThenBackLosesNothing() async throws {
        let seconds = ProcessInfo.processInfo.environment["KEEPALIVE_NETWORK_CUT_SECONDS"].flatMap(Int.init) ?? 120
        let link = try await Link()
        defer { link.space.remove() }
        let broker = try await MosquittoBroker(namespace: link.namespace, address: link.brokerAddress)
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal,
            deliver: ["home=mqtt://\(link.brokerAddress):\(broker.port)/owntracks/me/phone"], speed: "5", extra: ["--loop"]
        )
        try await eventually("the first deliveries") { subscriber.messages.count >= 10 }
        try await link.set(up: false)
        let cutAt = try allRecords(journal).count
        try await Task.sleep(for: .seconds(seconds))
        let backlog = try DeliveryRuns.depth(journal)
        try await link.set(up: true)
        let upAt = ContinuousClock.now
        do {
            try await eventually("the backlog delivered after the link came back", timeout: .seconds(120)) {
                (try? DeliveryRuns.depth(journal)) ?? 1 <= 10
            }
        } catch {
            let status = try? FixJournal(file: URL(fileURLWithPath: journal)).status().destinations.first
            Issue.record("\(error): \(String(describing: status))\n\(service.output.split(separator: "\n").filter { !$0.contains("\"class\":\"fix\"") }.suffix(15).joined(separator: "\n"))")
            throw error
        }
        let recovery = ContinuousClock.now - upAt
        await service.expectCleanStop()
        let drain = try await runCommand(try Tools.keepalive.path, ["upload", "--journal", journal, "--drain"], timeout: .seconds(60))
        #expect(drain.exitCode == 0)
        let records = try allRecords(journal)
        try await eventually("every journaled fix at the subscriber") { Set(subscriber.messages.map(\.key)).count >= records.count }
        let counts = DeliveryCounts(
            produced: DeliveryRuns.producedFixes(service.output).count, journal: records, received: subscriber.messages.map(\.key)
        )
        print("link down \(seconds) s (\(records.count - cutAt) fixes journaled meanwhile, backlog \(backlog)), back in \(recovery): \(counts)")
        #expect(backlog > seconds, "fixes kept coming while the link was down")
        #expect(counts.lost == 0 && counts.journaled == counts.produced, "\(counts)")
    }
}
