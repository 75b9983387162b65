package import CSDBus
import Glibc

/// logind's word on where a process is, read through libsystemd (`sd_pid_get_session`):
/// the bus layer's, so that the rules above it hold no C type.
package struct LogindSessions {
    package let api: UnsafePointer<csdbus_table>

    package init(api: UnsafePointer<csdbus_table>) { self.api = api }

    /// Whether logind has `pid` in a session that is active now (its seat shows it).
    package func isInActiveSession(_ pid: Int32) -> Bool {
        var session: UnsafeMutablePointer<CChar>?
        guard api.pointee.sd_pid_get_session!(pid, &session) >= 0, let session else { return false }
        defer { free(session) }
        return api.pointee.sd_session_is_active!(session) > 0
    }
}
