// Why scripts/tsan reports races on state only touched inside Mutex.withLock (RELIABILITY.md):
// a contended Synchronization.Mutex waits in the futex slow path of libswiftSynchronization,
// which is not instrumented, so ThreadSanitizer never sees that acquire. Uncontended, it is seen.
//
//   swiftc -sanitize=thread scripts/tsan-mutex-contention.swift -o /tmp/contention && /tmp/contention
//
// prints a "data race" report although every access holds the lock.
import Dispatch
import Glibc
import Synchronization

final class Flag: Sendable { let isSet = Mutex(false) }

let flag = Flag()
let done = DispatchSemaphore(value: 0)
DispatchQueue(label: "holder").async {
    flag.isSet.withLock { isSet in if !isSet { usleep(300_000) } }  // holds the lock
    done.signal()
}
usleep(100_000)
DispatchQueue(label: "waiter").async {
    flag.isSet.withLock { $0 = true }  // waits for it: the uninstrumented slow path
    done.signal()
}
done.wait()
done.wait()
print("done: every access held the lock")
