import KeepAliveCore
import KeepAliveSimulation
import Testing

/// The energy model's arithmetic, on its figures: a wake's cost and the device's.
struct EnergyModelTests {
    private let model = EnergyModel()
    private let phone = EnergyModel.devices[0]

    @Test func oneFixAMinuteOnThePinePhoneIsAWakeOfAboutTwoSeconds() throws {
        let row = model.row(.init(name: "a minute", period: .seconds(60), receiverOnFraction: 0), on: phone)
        // 60 wakes of 0.78 + 1 + 0.2 s, and 30 s of refresh each 4 h (7.5 s an hour).
        let awake: Double = (60 * 1.98 + 7.5) / 3_600
        let on: Double = (60 * 1 + 7.5) / 3_600
        let power: Double = awake * 2_000 + (1 - awake) * 177 + on * 300
        #expect(abs(row.awake - awake) < 1e-9)
        #expect(abs(row.receiverOn - on) < 1e-9)
        #expect(abs(row.milliwattHoursPerHour - power) < 1e-9)
        #expect(try #require(row.hours) > 36, "the issue's target: 36 h on 11.5 Wh")
    }

    @Test func awakeThroughoutCostsTheLoggingFigure() throws {
        let row = model.row(EnergyModel.strategies[0], on: phone)
        #expect(row.milliwattHoursPerHour == 2_300)
        #expect(abs(try #require(row.hours) - 11.5 / 2.3) < 1e-9, "the 4-6 h reported")
    }

    @Test func aDeviceThatNeverSleepsStaysAwake() {
        let pi = EnergyModel.devices[1]
        #expect(model.row(EnergyModel.strategies[5], on: pi).awake == 1)
        #expect(model.row(EnergyModel.strategies[5], on: pi).hours == nil)
    }
}
