import Foundation

/// The threads the writer's statements and commits run on, so that no commit waiting for the
/// disk's fsync, and no write waiting for the write lock, holds a thread of Swift's cooperative
/// pool.
///
/// A task executor: a session runs each write with this executor preferred, and returns to the
/// cooperative pool after it. Requests that do not touch the database (a health check,
/// a metrics scrape) keep every cooperative thread while writers wait for the disk.
final class SQLiteThreads: TaskExecutor, @unchecked Sendable {
    /// The process's threads: as many as there are connections busy at once in a typical
    /// server (4 readers and the writer), shared by every database.
    static let shared = SQLiteThreads(count: 5)

    // `@unchecked Sendable`: `jobs` is touched only with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    private init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.serve() }
            thread.name = "SQLite \(index)"
            thread.start()
        }
    }

    /// Queues `job` for the next free thread.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs jobs, oldest first, for the life of the process.
    private func serve() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 {
                // A queue that never empties under load still gives its run jobs back.
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

extension SQLiteThreads {
    /// Runs `body` on one of the SQLite threads, and returns to the caller's executor after it.
    static func run<R: Sendable>(_ body: () throws -> R) async throws -> R {
        try await withTaskExecutorPreference(shared) { try await onPreferredExecutor(body) }
    }

    /// `@concurrent`: runs on the task's preferred executor, whatever the caller's isolation.
    @concurrent
    private static func onPreferredExecutor<R: Sendable>(_ body: () throws -> R) async throws -> R {
        try body()
    }
}
