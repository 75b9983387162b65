import CProcessControl
import Glibc

/// Keeps apps of the same user out of each other's processes: each app starts in a Landlock
/// domain of its own, and Landlock lets a process ptrace, read the memory of, or take the
/// descriptors of (`pidfd_getfd`) only processes of its own domain or one nested in it. The
/// domain denies nothing else (its one rule grants what it handles beneath `/`).
///
/// `PR_SET_DUMPABLE` would not do: `execve` sets it back for any program the user may read.
/// Landlock restricts a thread's credentials, which a process started from that thread
/// inherits; so the app is spawned from a thread made for it, restricted first, then ended.
enum AppConfinement {
    /// The ruleset every app's domain is made from, or why there is none.
    private static let ruleset: Result<Int32, Unavailable> = {
        let abi = cprocess_landlock_abi()
        guard abi >= 1 else {
            let reason = errno == ENOSYS ? "this kernel has no Landlock (Linux 5.13+)" : "Landlock is not enabled (add landlock to the kernel's lsm=)"
            return .failure(Unavailable(reason: reason))
        }
        let ruleset = cprocess_landlock_ruleset()
        guard ruleset >= 0 else {
            return .failure(Unavailable(reason: "cannot make a Landlock ruleset: \(String(cString: strerror(errno)))"))
        }
        return .success(ruleset)
    }()

    private struct Unavailable: Error { let reason: String }

    /// What keeps apps apart, for the host's start line.
    static var description: String {
        switch ruleset {
        case .success: "each app runs in a Landlock domain of its own: apps of one user cannot ptrace each other or take each other's descriptors"
        case .failure(let why): "apps of one user can ptrace each other: \(why.reason)"
        }
    }

    /// Runs `spawn` on a thread of its own put in a new domain first (without Landlock, as
    /// it is). The thread ends with it: the host's own threads are never restricted.
    ///
    /// - Returns: what `spawn` returned, or the errno of a restriction that failed.
    static func confined(_ spawn: () -> Int32) -> Int32 {
        guard case .success = ruleset else { return spawn() }
        // The thread is joined before this returns: the closure never outlives the call.
        return withoutActuallyEscaping(spawn) { spawn in onThread(Work(spawn)) }
    }

    private static func onThread(_ work: Work) -> Int32 {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(work).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
            guard case .success(let ruleset) = AppConfinement.ruleset,
                cprocess_landlock_restrict_thread(ruleset) == 0
            else {
                work.result = errno
                return nil
            }
            work.result = work.body()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            return created
        }
        pthread_join(thread, nil)
        return work.result
    }

    /// What the spawning thread runs and returns (handed over and joined: never shared).
    private final class Work: @unchecked Sendable {
        let body: () -> Int32
        var result: Int32 = 0
        init(_ body: @escaping () -> Int32) { self.body = body }
    }
}
