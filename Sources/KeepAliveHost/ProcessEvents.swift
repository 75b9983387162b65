import CProcessEvents
import Dispatch
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// Follows every process an app starts, wherever it goes, from the kernel's own word: the
/// process events connector tells of each fork and exit, so a child that leaves the app's
/// session (`setsid`) and is orphaned to pid 1 is still the app's. The signal freezer counts on
/// it; the cgroup freezers need none (a cgroup holds its processes' children).
final class ProcessEvents: Sendable {
    private let descriptor: Int32
    // Dispatch sources are thread-safe, but Dispatch does not mark the protocol Sendable.
    nonisolated(unsafe) private let source: any DispatchSourceRead
    private let state = Locked(State())

    private struct State {
        /// Each followed process's app and start.
        var owners: [Int32: Owner] = [:]
        /// The latest forks and exits, for a process followed only once it has already forked
        /// (its launch returns after the kernel told of its first children).
        var recent = RecentForks()
        /// Whether the kernel dropped events: a process forked meanwhile may not be followed.
        var lostEvents = 0
    }

    /// Starts listening.
    ///
    /// - Throws: ``HostError/Code/freezerUnavailable`` saying why the kernel's process events
    ///   cannot be read here.
    init() throws(HostError) {
        descriptor = try Self.open()
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: "keepalive.host.process-events"))
        let state = state
        source.setEventHandler { [descriptor] in
            var buffer = [UInt8](repeating: 0, count: 8_192)
            var events = [Int32](repeating: 0, count: 3 * 256)
            while true {
                let length = SystemCall.retryingOnInterrupt {
                    buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                }
                if length < 0, errno == ENOBUFS {  // the kernel dropped events: told, and read on
                    state.withLock { $0.lostEvents += 1 }
                    continue
                }
                guard length > 0 else { return }
                let count = buffer.withUnsafeBytes { bytes in
                    events.withUnsafeMutableBufferPointer {
                        cpe_parse(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), length, $0.baseAddress, $0.count)
                    }
                }
                state.withLock { state in
                    for index in stride(from: 0, to: count, by: 3) {
                        let (kind, pid, parent) = (events[index], events[index + 1], events[index + 2])
                        if kind == 1 {
                            if let owner = state.owners[parent] { state.owners[pid] = Owner(owner.app, pid) }
                            state.recent.forked(pid, from: parent)
                        } else {
                            state.owners[pid] = nil
                            state.recent.exited(pid)
                        }
                    }
                }
            }
        }
        source.setCancelHandler { [descriptor] in close(descriptor) }
        source.activate()
    }

    /// The connector's socket, listening.
    private static func open() throws(HostError) -> Int32 {
        let descriptor = socket(CPE_AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), CPE_NETLINK_CONNECTOR)
        var address = [UInt8](repeating: 0, count: 64)
        var request = [UInt8](repeating: 0, count: 64)
        let addressLength = address.withUnsafeMutableBufferPointer { cpe_address($0.baseAddress, Int32($0.count)) }
        let requestLength = request.withUnsafeMutableBufferPointer { cpe_listen_request($0.baseAddress, Int32($0.count)) }
        var size: Int32 = 4 << 20  // bursts of forks: a lost event is a process not followed
        if descriptor >= 0, setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = descriptor >= 0 && address.withUnsafeBytes {
            bind(descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addressLength)) == 0
        }
        let listening = bound && request.withUnsafeBytes { send(descriptor, $0.baseAddress, Int(requestLength), 0) == Int(requestLength) }
        guard listening else {
            let reason = String(cString: strerror(errno)).lowercased()
            if descriptor >= 0 { close(descriptor) }
            throw HostError(
                .freezerUnavailable,
                "the signal freezer follows an app's processes by the kernel's process events, which cannot be read here (\(reason); it needs CONFIG_PROC_EVENTS, and root on older kernels): run the host as root, or use a cgroup freezer"
            )
        }
        return descriptor
    }

    deinit { source.cancel() }

    /// Follows `pid` as `app`'s, with the children the kernel told of before; nothing when the
    /// kernel already told of its exit (its pid would soon be someone else's).
    func follow(_ pid: Int32, as app: String) {
        state.withLock { state in
            guard !state.recent.hasExited(pid) else { return }
            state.owners[pid] = Owner(app, pid)
            for child in state.recent.livingDescendants(of: pid) { state.owners[child] = Owner(app, child) }
        }
    }

    /// The processes followed as `app`'s now.
    func processes(of app: String) -> [Int32] {
        state.read { $0.owners.filter { $0.value.app == app } }.compactMap { pid, owner in
            ProcFS.isProcess(pid, startedAt: owner.start) ? pid : nil
        }
    }

    /// Whether `pid` is followed as `app`'s.
    func isFollowed(_ pid: Int32, as app: String) -> Bool {
        guard let owner = state.read({ $0.owners[pid] }), owner.app == app else { return false }
        return ProcFS.isProcess(pid, startedAt: owner.start)
    }

    /// A followed process's app and start: with its pid, the start names that one process (a
    /// pid whose exit was missed may be someone else's by now).
    private struct Owner {
        let app: String
        let start: UInt64?

        init(_ app: String, _ pid: Int32) {
            self.app = app
            start = ProcFS.startTime(of: pid)
        }
    }

    /// How many times the kernel dropped events since the start.
    var lostEvents: Int { state.read(\.lostEvents) }
}
