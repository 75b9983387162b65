/// Where one consumer's updates go: an async stream, or a handler called on the source's thread.
struct UpdateSink: Sendable {
    /// Hands over one update; called outside the manager's lock.
    let deliver: @Sendable (LocationUpdate) -> Void
    /// Ends the consumer: `nil` for a normal end, or the error the source ended with.
    let finish: @Sendable ((any Error)?) -> Void

    static func stream(_ continuation: AsyncThrowingStream<LocationUpdate, any Error>.Continuation) -> UpdateSink {
        UpdateSink(
            deliver: { continuation.yield($0) },
            finish: { continuation.finish(throwing: $0) }
        )
    }

    /// A handler, called one update at a time even when authorization news comes from another
    /// thread than the source's, and never after the end.
    static func handler(
        _ handler: @escaping @Sendable (LocationUpdate) -> Void,
        done: CheckedContinuation<Void, any Error>
    ) -> UpdateSink {
        let state = Guarded(done)
        return UpdateSink(
            deliver: { update in
                state.pending.withLock { pending in if pending != nil { handler(update) } }
            },
            finish: { error in
                let done = state.pending.withLock { pending in
                    defer { pending = nil }
                    return pending
                }
                if let error { done?.resume(throwing: error) } else { done?.resume() }
            }
        )
    }

    private final class Guarded: Sendable {
        let pending: Locked<CheckedContinuation<Void, any Error>?>
        init(_ done: CheckedContinuation<Void, any Error>) { pending = Locked(done) }
    }
}
