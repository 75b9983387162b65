import Foundation
import LocationKeepAlive
import Testing

/// Low power from a fake `/sys/class/power_supply`.
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
