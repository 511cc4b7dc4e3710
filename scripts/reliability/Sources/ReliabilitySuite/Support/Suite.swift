import Foundation
import Synchronization

/// Where the suite runs and how long.
struct SuiteOptions: Sendable {
    enum Mode: String, Sendable { case short, full }

    var mode: Mode
    var packageFolder: URL
    var serverExecutable: URL
    /// This executable, started again as the second process of the writer-contention scenario.
    var suiteExecutable: URL
    /// A temporary folder for databases and server logs, removed when the suite ends.
    var workFolder: URL

    /// `short` in CI, `full` for RELIABILITY.md.
    func scaled(short: Int, full: Int) -> Int { mode == .short ? short : full }

    /// A new database file in the work folder.
    func databaseFile(_ name: String) -> URL {
        workFolder.appending(path: "\(name)-\(UUID().uuidString.prefix(8)).sqlite")
    }
}

/// What a scenario measured: one line of figures, and every target it missed.
struct ScenarioResult: Sendable {
    var name: String
    var figures: [String] = []
    var failures: [String] = []

    init(_ name: String) { self.name = name }

    var passed: Bool { failures.isEmpty }

    /// Records `figure` and, when `met` is false, a failure naming the target.
    mutating func check(_ figure: String, target: String, _ met: Bool) {
        figures.append(met ? figure : "\(figure) (target \(target))")
        if !met { failures.append("\(figure); target \(target)") }
    }

    mutating func report(_ figure: String) { figures.append(figure) }
}

struct SuiteError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

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

/// Runs `body(index)` on `count` threads of their own (blocking sockets need threads, not
/// tasks) and returns when all have finished.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// Polls `condition` every 50 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return condition()
}

extension Int {
    /// `100000` as `100,000`.
    var grouped: String { formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US"))) }
}
