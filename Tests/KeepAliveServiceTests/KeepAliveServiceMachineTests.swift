import Foundation
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring
@testable import KeepAliveService
import Testing

/// The service's rules, proven on its machine alone: the foreground watch, the host's notices
/// (a freeze prepared for within its deadline), location events, the stop's order. The
/// end-to-end suites (RunServiceTests, HostRemoteCommandTests, MQTTDeliveryTests...) prove the
/// service does them.
@Suite struct KeepAliveServiceMachineTests {
    typealias Machine = KeepAliveServiceMachine

    static func machine(ownMonitor: Bool = false, stopTimeout: Duration = .seconds(5)) -> Machine {
        Machine(options: .init(hasOwnMonitor: ownMonitor, stopTimeout: stopTimeout))
    }

    static let event = MonitorEvent(
        identifier: "home", state: .satisfied, date: Date(timeIntervalSince1970: 0),
        location: Location(latitude: 52.5, longitude: 13.4)
    )

    @Test func theForegroundWatchIsOpenWhileActiveOnly() {
        var machine = Self.machine()
        #expect(machine.handle(.lifecycle(.didEnterBackground)).isEmpty)  // none was open
        #expect(machine.handle(.lifecycle(.didBecomeActive)) == [.startForegroundWatch])
        #expect(machine.handle(.lifecycle(.didEnterBackground)) == [.stopForegroundWatch])
        _ = machine.handle(.lifecycle(.didBecomeActive))
        #expect(machine.handle(.lifecycle(.terminated(.requested))) == [.stopForegroundWatch])
    }

    @Test func anOwnMonitorIsTheOneWatch() {
        var machine = Self.machine(ownMonitor: true)
        #expect(machine.handle(.lifecycle(.didBecomeActive)).isEmpty)
        #expect(!machine.isWatching)
    }

    @Test(arguments: [
        (0.5, Duration.milliseconds(400)),  // four fifths of the host's deadline
        (60, .seconds(5)),  // at most the stop timeout
        (-1, .zero),
    ])
    func aFreezeIsPreparedForWithinTheHostsDeadlineThenAnswered(deadline: Double, delivery: Duration) {
        var machine = Self.machine()
        #expect(
            machine.handle(.hostNotice(.willSuspend(deadline: deadline))) == [
                .post(.suspendedByHost),
                .prepareForSuspension(deliveryWithin: delivery),
                .answer(.willSuspend),
                .note("host: will suspend; audio drained, location closed, answered"),
            ]
        )
    }

    @Test func theHostsNoticesBecomeTheModelsCommands() {
        var machine = Self.machine()
        #expect(machine.handle(.hostNotice(.lifecycle(.background))) == [.post(.enterBackground)])
        #expect(machine.handle(.hostNotice(.lifecycle(.foreground))) == [.post(.enterForeground)])
        #expect(
            machine.handle(.hostNotice(.didResume))
                == [.note("host: resumed after a freeze"), .post(.resumedByHost), .resumeAfterSuspension]
        )
        #expect(
            machine.handle(.hostNotice(.runTask("sync")))
                == [.note("host: run scheduled task sync"), .post(.runScheduledTask("sync"))]
        )
        #expect(
            machine.handle(.hostNotice(.workExpiring("sync")))
                == [.note("host: scheduled task sync expiring"), .post(.scheduledTaskExpiring("sync"))]
        )
        #expect(machine.handle(.hostNotice(.taskExpiring(3))) == [.note("host: background task #3 expiring")])
        #expect(machine.handle(.hostNotice(.locationEvent(Self.event, received: nil))) == [.recordEvent(Self.event), .post(.wakeForLocationEvent)])
    }

    @Test func aLocationEventIsRecordedBeforeTheAppIsWokenForIt() {
        var machine = Self.machine()
        #expect(machine.handle(.locationEvent(Self.event)) == [.recordEvent(Self.event), .post(.wakeForLocationEvent)])
    }

    @Test func theStopEndsTheAppThenTheWorkThenDevicesThenDeliversWhatWaitsAndNothingAfter() {
        var machine = Self.machine(stopTimeout: .seconds(7))
        _ = machine.handle(.lifecycle(.didBecomeActive))
        #expect(
            machine.handle(.stopRequested)
                == [.terminateApp, .endWork, .stopDevices, .finishDelivery(within: .seconds(7)), .reportStopped]
        )
        #expect(machine.handle(.locationEvent(Self.event)).isEmpty)
        #expect(machine.handle(.lifecycle(.didBecomeActive)).isEmpty)
    }
}
