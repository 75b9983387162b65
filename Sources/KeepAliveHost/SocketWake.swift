import CProcessControl
import Dispatch
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// A frozen app's sockets, watched by the host: the first data to arrive on any of them wakes
/// the app, once (the host's push: a server's command reaches an app that is frozen). A
/// socket its peer closed is left: nothing comes on it any more. It watches copies of the
/// descriptors, closed as each watch ends, so the caller may close its own at any time.
final class SocketWake: Sendable {
    // Dispatch sources are thread-safe (cancel may be called from any thread), but Dispatch
    // does not mark the protocol Sendable.
    nonisolated(unsafe) private let sources: [any DispatchSourceRead]
    private let fired = Locked(false)

    /// Calls `onData` (on a queue of its own) when data waits on one of `descriptors`, at most
    /// once, until ``stop()``. The data is only peeked at: it stays for the app to read.
    init(descriptors: [Int32], onData: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "LocationKeepAlive.socket-wake")
        let copies = descriptors.map { fcntl($0, F_DUPFD_CLOEXEC, 0) }.filter { $0 >= 0 }
        sources = copies.map { DispatchSource.makeReadSource(fileDescriptor: $0, queue: queue) }
        for (source, descriptor) in zip(sources, copies) {
            source.setCancelHandler { close(descriptor) }
            source.setEventHandler { [weak self] in
                var byte: UInt8 = 0
                let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                guard let self, count >= 0 else { return }  // nothing yet
                if count > 0 {
                    let first = fired.withLock { fired in
                        defer { fired = true }
                        return !fired
                    }
                    stop()  // level-triggered: the data stays until the app reads it
                    if first { onData() }
                } else {
                    stop(source)  // the peer closed it
                }
            }
            source.activate()
        }
    }

    /// Stops watching every socket.
    func stop() {
        for source in sources { stop(source) }
    }

    private func stop(_ source: any DispatchSourceRead) {
        if !source.isCancelled { source.cancel() }
    }

    deinit { stop() }
}

extension SocketWake {
    /// The host's copies (pidfd_getfd) of the sockets `sockets` of process `pid` names: all, or
    /// none and an error that says which is not a socket or cannot be taken.
    static func copies(of sockets: [Int32], in pid: Int32) throws(HostError) -> [Int32] {
        var copies: [Int32] = []
        for socket in sockets {
            let copy = socket >= 0 ? cprocess_take_descriptor(pid, socket) : -1
            guard copy >= 0 else {
                let reason = socket < 0 ? "not a descriptor" : String(cString: strerror(errno))
                for taken in copies { close(taken) }
                throw HostError(.badRequest, "wake-on-data: cannot take descriptor \(socket) of process \(pid) (\(reason); pidfd_getfd needs Linux 5.6)")
            }
            var status = stat()
            guard fstat(copy, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else {
                close(copy)
                for taken in copies { close(taken) }
                throw HostError(.badRequest, "wake-on-data: descriptor \(socket) is not a socket")
            }
            copies.append(copy)
        }
        return copies
    }
}
