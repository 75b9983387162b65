import Clocks
import Foundation
import KeepAliveCore
import KeepAliveSimulation
import Testing

/// Low power and the battery's charge from a fake `/sys/class/power_supply`.
@Suite struct PowerSupplyTests {
    private func tree(_ supplies: [String: [String: String]]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("power-\(UUID().uuidString)")
        for (name, files) in supplies {
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (file, content) in files {
                try (content + "\n").write(to: folder.appendingPathComponent(file), atomically: true, encoding: .utf8)
            }
        }
        return root
    }

    @Test func lowOnlyOnBatteryBelowTheThreshold() throws {
        let mains = ["AC": ["type": "Mains", "online": "1"]]
        #expect(!PowerSupply.isLowPower(root: try tree(mains)))
        #expect(
            PowerSupply.isLowPower(
                root: try tree(["BAT0": ["type": "Battery", "status": "Discharging", "capacity": "12"]])
            )
        )
        #expect(
            !PowerSupply.isLowPower(
                root: try tree(["BAT0": ["type": "Battery", "status": "Discharging", "capacity": "55"]])
            )
        )
        #expect(
            !PowerSupply.isLowPower(
                root: try tree(["BAT0": ["type": "Battery", "status": "Charging", "capacity": "5"]])
            )
        )
        #expect(!PowerSupply.isLowPower(root: URL(fileURLWithPath: "/nonexistent")))
    }

    @Test func theBatteryIsReadAtMostOnceAMinute() async {
        let clock = TestClock<Duration>()
        let reads = Locked(0)
        let charge = Locked<Int?>(80)
        let battery = PowerSupply.cachedBatteryLevel(clock: clock) {
            reads.withLock { $0 += 1 }
            return charge.withLock { $0 }
        }
        #expect(battery() == 80 && battery() == 80)
        #expect(reads.withLock { $0 } == 1, "one read for two fixes in the same second")
        charge.withLock { $0 = 79 }
        await clock.advance(by: .seconds(59))
        #expect(battery() == 80, "the last reading, younger than a minute")
        await clock.advance(by: .seconds(1))
        #expect(battery() == 79)
        charge.withLock { $0 = nil }  // the battery taken out
        await clock.advance(by: .seconds(60))
        #expect(battery() == nil)
        #expect(reads.withLock { $0 } == 3)
    }

    @Test func theFirstBatteryIsReadFromItsFolder() throws {
        let root = try tree([
            "AC": ["type": "Mains", "online": "1"],
            "BAT1": ["type": "Battery", "capacity": "40"],
            "BAT0": ["type": "Battery", "capacity": "93"],
        ])
        #expect(PowerSupply.batteryLevel(root: root.path) == 93)
        #expect(PowerSupply.batteryLevel(root: try tree(["AC": ["type": "Mains"]]).path) == nil)
    }

    @Test func lowPowerStretchesCallBacksButNotTheKeepAliveTick() {
        let app = Application(profile: .ios13, backgroundModes: [.audio, .location], authorization: .whenInUse)
        let audio = SimulatedAudioOutput(app: app)
        var lowPower = false
        let driver = HybridKeepAlive(
            KeepAliveContext(app: app, audio: audio, location: SimulatedLocationProvider(app: app)),
            isLowPower: { lowPower }
        )
        var callbacks: [Duration] = []
        driver.onCallback = { callbacks.append(app.now) }
        app.addObserver { driver.handle($0) }
        app.launch()
        app.enterBackground()
        app.run(for: .seconds(129))  // pulses at 29, 39, ..., 129: 11; call-backs at 30, 60, 90, 120
        #expect(audio.pulses == 11)
        lowPower = true
        app.run(for: .seconds(200))  // pulses still every 10 s (to 329); the 139 s tick sees low power
        #expect(audio.pulses == 11 + 20)
        #expect(callbacks == [30, 60, 90, 120, 150, 210, 270].map { Duration.seconds($0) }, "call-backs every 60 s")
        #expect(app.statistics.suspensions.isEmpty)
    }
}
