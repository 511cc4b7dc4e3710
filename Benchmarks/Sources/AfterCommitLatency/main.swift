import Foundation
import Scoped
import ScopedDatabase
import ScopedSQLite
import Synchronization

// How long after its request's commit the work it handed off with `handOff(.afterCommit)`
// starts, with `CONCURRENCY` requests at once writing one real SQLite file: each request opens a
// scope, inserts a row in its session's transaction and hands off one piece of work. The commit's
// time is taken by a service built before the session, which therefore closes after it: once the
// `COMMIT` has returned. The work takes its own time as it starts.
//
// Usage: swift run -c release --package-path Benchmarks AfterCommitLatency
//   REQUESTS=20000  CONCURRENCY=16

let environment = ProcessInfo.processInfo.environment
let requests = environment["REQUESTS"].flatMap { Int($0) } ?? 20_000
let concurrency = environment["CONCURRENCY"].flatMap { Int($0) } ?? 16
let clock = ContinuousClock()

/// One request's commit time, set by ``CommitMarkKey``'s close.
final class CommitMark: Sendable {
    let committedAt = Mutex<ContinuousClock.Instant?>(nil)
}

/// Built first in each request's scope, so closed last: after its session committed.
enum CommitMarkKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> CommitMark { CommitMark() }
    static func close(_ mark: CommitMark, outcome: ScopeOutcome) async throws {
        mark.committedAt.withLock { $0 = clock.now }
    }
}

/// Every delay measured, in nanoseconds.
let delays = Mutex<[Int64]>([])

let folder = FileManager.default.temporaryDirectory.appending(path: "after-commit-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let configuration = SQLiteConfiguration(
    path: folder.appending(path: "latency.sqlite").path,
    migrations: [
        SQLiteMigration(
            version: 1,
            name: "events",
            statements: ["CREATE TABLE events (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"]
        )
    ]
)
let root = ScopeRoot(services: [SQLiteDatabaseKey.self, SQLiteSessionKey.self]) {
    $0.sqliteConfiguration = configuration
    $0.transactionMode = .readWrite
}

/// One request: a row inserted in its transaction, and work handed off for after its commit.
func request() async throws {
    try await root.withScope {
        let mark = try await ScopedValues.current.service(CommitMarkKey.self)
        _ = try await ScopedValues.current.sqliteSession.execute("INSERT INTO events (body) VALUES ('created')")
        handOff(.afterCommit, timeout: .seconds(10)) {
            let started = clock.now
            guard let committed = mark.committedAt.withLock({ $0 }) else { return }
            let delay = started - committed
            let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
            delays.withLock { $0.append(nanoseconds) }
        }
    }
}

let started = clock.now
try await withThrowingTaskGroup { group in
    for worker in 0..<concurrency {
        group.addTask {
            for _ in stride(from: worker, to: requests, by: concurrency) { try await request() }
        }
    }
    try await group.waitForAll()
}
await root.shutdown()  // waits for every piece of work
let elapsed = clock.now - started

let sorted = delays.withLock { $0 }.sorted()
precondition(sorted.count == requests, "\(sorted.count) of \(requests) pieces of work ran")
func percentile(_ p: Double) -> String {
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return String(format: "%.1f µs", Double(sorted[max(0, index)]) / 1_000)
}
print("| requests | at once | p50 | p99 | p99.9 | max | requests/s |")
print("|---:|---:|---:|---:|---:|---:|---:|")
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print(
    "| \(requests) | \(concurrency) | \(percentile(0.5)) | \(percentile(0.99)) | \(percentile(0.999)) | "
        + "\(percentile(1.0)) | \(Int(Double(requests) / seconds)) |"
)
