/// Why the bus could not be used: what is missing and how to get it (`setup`), or a connection
/// that failed while in use (`lost`).
package enum BusFailure: Error, Sendable, CustomStringConvertible {
    case setup(String)
    case lost(String)

    package var description: String {
        switch self {
        case .setup(let reason), .lost(let reason): reason
        }
    }
}
