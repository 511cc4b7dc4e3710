import Foundation

// Runs every workload in one process and prints a Markdown table for BENCHMARKS.md.
// Usage: swift run -c release --package-path Benchmarks ScopedBenchmarks [filter]
let filter = CommandLine.arguments.dropFirst().first

/// Every workload that needs no server, in the table's order.
func localWorkloads() -> [Workload] {
    coreWorkloads() + rootSizeWorkloads() + lifetimeWorkloads() + instrumentationWorkloads()
        + ((try? sqliteWorkloads()) ?? [])
}

extension Workload {
    /// Whether the command line's `filter` (none: every workload) names this one's group or name.
    func matches(_ filter: String?) -> Bool {
        filter.map { group.contains($0) || name.contains($0) } ?? true
    }
}

/// Measures the workloads inside a task, as a request handler runs, and formats the table.
func runBenchmarks(filter: String?) async -> [String] {
    var postgres: [Workload] = []
    if filter == nil || filter!.contains("postgres") {
        do {
            postgres = try await postgresWorkloads()
        } catch {
            print("The PostgreSQL rows are left out: \(error)")
        }
    }
    let workloads = (localWorkloads() + postgres).filter { $0.matches(filter) }
    let results = await Harness().measure(workloads)
    let baseline = results.first { $0.workload.name.hasPrefix("hand-wired") }?.nanosecondsPerOp
    let taskLocal = results.first { $0.workload.name == "raw @TaskLocal read + call" }?.nanosecondsPerOp
    var rows = [
        "| group | workload (one op) | ns/op | × hand-wired | × raw task-local | allocs/op |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for result in results {
        let ns = result.nanosecondsPerOp
        let ratio = { (base: Double?) in base.map { String(format: "%.1f", ns / $0) } ?? "–" }
        rows.append(
            "| \(result.workload.group) | \(result.workload.name) | \(String(format: "%.1f", ns)) | \(ratio(baseline)) | "
                + "\(ratio(taskLocal)) | \(String(format: "%.2f", result.allocationsPerOp)) |"
        )
    }
    return rows
}

/// Runs each matching workload exactly `n` times and measures nothing: for counting a
/// workload's calls with `perf stat` and uprobes, which needs a known number of operations.
func runFixed(_ n: Int, filter: String?) async {
    for workload in localWorkloads() where workload.matches(filter) {
        _ = await workload.run(n)
    }
}

if let fixed = ProcessInfo.processInfo.environment["SCOPED_BENCH_OPERATIONS"].flatMap({ Int($0) }) {
    await Task.detached { await runFixed(fixed, filter: filter) }.value
} else {
    for row in await Task.detached(operation: { await runBenchmarks(filter: filter) }).value {
        print(row)
    }
}
