// The Swift snippets of TheReceiversPower.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import LocationKeepAlive

@MainActor func theReceiversPowerSnippet1() async throws {
    let control = try await ReceiverPower.choose(.auto)
    let power = ReceiverPowerSwitch(control: control, notes: { note in print(note) })
    let manager = LocationManager(source: GPSDSource(), receiverPower: power)
    // Precise: the receiver on, off again once the fix came.
    let here = try await manager.requestLocation(desiredAccuracy: 20, timeout: .seconds(30))
    // Coarse: the last fix, grown with its age; the receiver stays off.
    let roughly = try await manager.requestLocation(desiredAccuracy: LocationManager.coarseAccuracy, timeout: .seconds(30))
    print(here, roughly)
}
