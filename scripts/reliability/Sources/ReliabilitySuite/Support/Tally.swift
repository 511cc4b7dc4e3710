import Synchronization

/// Counters shared by client threads.
final class Tally: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    private let examples = Mutex<[String: String]>([:])
    private let latencies = Mutex<[Double]>([])

    func add(_ name: String, _ amount: Int = 1, example: @autoclosure () -> String? = nil) {
        counts.withLock { $0[name, default: 0] += amount }
        if let example = example() {
            examples.withLock { if $0[name] == nil { $0[name] = example } }
        }
    }

    subscript(name: String) -> Int { counts.withLock { $0[name, default: 0] } }

    /// Every count, by name.
    var all: [String: Int] { counts.withLock { $0 } }

    /// The first example recorded for `name`, to show what went wrong.
    func example(_ name: String) -> String { examples.withLock { $0[name] ?? "" } }

    func record(latency seconds: Double) { latencies.withLock { $0.append(seconds) } }

    /// The latency at `quantile` (0...1), in milliseconds.
    func latency(_ quantile: Double) -> Double {
        let sorted = latencies.withLock { $0.sorted() }
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))] * 1000
    }
}
