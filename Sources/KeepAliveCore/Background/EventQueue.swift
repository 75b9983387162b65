/// Events ordered by time, then by when they were added: a binary min-heap.
struct EventQueue<Payload> {
    struct Entry {
        let time: Duration
        let sequence: Int
        let payload: Payload
    }

    private var heap: [Entry] = []
    private var nextSequence = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var nextTime: Duration? { heap.first?.time }

    mutating func insert(_ payload: Payload, at time: Duration) {
        heap.append(Entry(time: time, sequence: nextSequence, payload: payload))
        nextSequence += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry due at or before `time`.
    mutating func popDue(atOrBefore time: Duration) -> Entry? {
        guard let first = heap.first, first.time <= time else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Self.precedes(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.precedes(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }
}
