import Foundation
import MallocCounter

/// One measured workload: `run(n)` performs the operation `n` times and returns a checksum so
/// the optimizer cannot drop the work.
struct Workload {
    let group: String
    let name: String
    let run: (Int) async -> Int
}

/// A workload's result: median nanoseconds and heap allocations per operation.
struct Measurement {
    let workload: Workload
    let nanosecondsPerOp: Double
    let allocationsPerOp: Double
}

/// Measures workloads the way BENCHMARKS.md's method says: all in one process, interleaved, the median
/// of `repetitions` runs of at least `minimumDuration` each, inside a task as a handler would run.
struct Harness {
    var repetitions = 7
    var minimumDuration: Duration = .milliseconds(200)

    func measure(_ workloads: [Workload]) async -> [Measurement] {
        var iterations: [Int] = []
        for workload in workloads {
            iterations.append(await calibrate(workload))
        }
        var samples = Array(repeating: [Double](), count: workloads.count)
        for _ in 0..<repetitions {
            for (index, workload) in workloads.enumerated() {
                let clock = ContinuousClock()
                let n = iterations[index]
                var checksum = 0
                let elapsed = await clock.measure { checksum = await workload.run(n) }
                blackHole(checksum)
                samples[index].append(elapsed.nanoseconds / Double(n))
            }
        }
        var results: [Measurement] = []
        for (index, workload) in workloads.enumerated() {
            let n = 10_000
            _ = await workload.run(n)  // warm caches and lazily built values first
            let before = scoped_malloc_count()
            blackHole(await workload.run(n))
            let allocations = Double(scoped_malloc_count() - before) / Double(n)
            let sorted = samples[index].sorted()
            results.append(
                Measurement(
                    workload: workload,
                    nanosecondsPerOp: sorted[sorted.count / 2],
                    allocationsPerOp: allocations
                )
            )
        }
        return results
    }

    private func calibrate(_ workload: Workload) async -> Int {
        var n = 100
        let clock = ContinuousClock()
        while true {
            var checksum = 0
            let elapsed = await clock.measure { checksum = await workload.run(n) }
            blackHole(checksum)
            if elapsed >= minimumDuration { return n }
            precondition(n < 1 << 40, "\(workload.name) takes no time: the optimizer removed its work")
            let scale =
                elapsed == .zero ? 10 : min(10, max(1.5, minimumDuration.nanoseconds / elapsed.nanoseconds * 1.2))
            n = Int(Double(n) * scale)
        }
    }
}

extension Duration {
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

nonisolated(unsafe) var blackHoleSink = 0

@inline(never)
func blackHole(_ value: Int) {
    blackHoleSink &+= value
}
