import LocationKeepAlive

/// gpsfake's port accepts connections a little after launch: wait for gpsd to answer a WATCH.
package func waitUntilGPSDAccepts(port: Int) async throws {
    let deadline = ContinuousClock.now + Tools.patience
    while ContinuousClock.now < deadline {
        do {
            for try await case .status(.connected) in GPSDSource(port: port).events() { return }
        } catch {
            try await Task.sleep(for: .milliseconds(100))  // pacing: the next connection, tried 10 times a second
        }
    }
    throw ToolMissing("gpsfake did not open port \(port) within \(Tools.patience)")
}
