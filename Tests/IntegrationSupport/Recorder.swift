import LocationKeepAlive
import TestWaiting

/// Reads an async sequence in a task and keeps everything it yields, for later assertions.
package final class Recorder<Element: Sendable>: Sendable {
    private final class Storage: Sendable {
        package let elements = Locked<[Element]>([])
        package let error = Locked<(any Error)?>(nil)
    }
    private let storage = Storage()
    private let task: Task<Void, Never>

    package init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        let storage = self.storage
        task = Task {
            do {
                for try await element in sequence { storage.elements.withLock { $0.append(element) } }
            } catch {
                storage.error.withLock { $0 = error }
            }
        }
    }

    package var elements: [Element] { storage.elements.withLock { $0 } }
    package var error: (any Error)? { storage.error.withLock { $0 } }

    /// Waits until `condition` holds, looked at off the pool (TestWaiting's `holds`); false
    /// after `timeout` (a hang).
    @discardableResult
    package func wait(upTo timeout: Duration = .seconds(60), until condition: @escaping @Sendable ([Element]) -> Bool) async -> Bool {
        (try? await holds(within: timeout) { [self] in condition(elements) }) == true
    }

    /// Waits until nothing new arrived for `quiet` (the stream drained), at most `timeout`.
    package func waitUntilQuiet(_ quiet: Duration = .milliseconds(500), upTo timeout: Duration = .seconds(10)) async {
        let deadline = ContinuousClock.now + Tools.bound(timeout)
        var count = -1
        while ContinuousClock.now < deadline, elements.count != count {
            count = elements.count
            do { try await Task.sleep(for: Tools.bound(quiet)) } catch { return }  // pacing: quiet is this long without an element
        }
    }

    package func cancel() { task.cancel() }

    deinit { task.cancel() }
}
