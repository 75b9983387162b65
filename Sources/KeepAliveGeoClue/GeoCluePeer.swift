/// One connection on the bus that called the service: who it is (as the bus says), what it
/// holds, and its call budget. Forgotten, with its clients, when it leaves the bus.
final class GeoCluePeer {
    let name: String
    let uid: UInt32
    let pid: Int32
    /// The host's app whose group holds its process, if any.
    let hostedApp: String?
    /// Tells the server when the connection is gone.
    var track: OpaquePointer?
    /// Its clients' paths; the first is what `GetClient` returns.
    var clients: [String] = []
    private var tokens: Double
    private var refilled: Double

    init(name: String, uid: UInt32, pid: Int32, hostedApp: String?, burst: Double, now: Double) {
        self.name = name
        self.uid = uid
        self.pid = pid
        self.hostedApp = hostedApp
        tokens = burst
        refilled = now
    }

    /// Takes one call from the budget (`rate` a second, up to `burst`); `false` when it is spent.
    func takeCall(rate: Double, burst: Double, now: Double) -> Bool {
        tokens = min(burst, tokens + (now - refilled) * rate)
        refilled = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
