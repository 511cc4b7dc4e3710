import Foundation
import Synchronization

/// The thread a database's writer runs its statements and commits on, so that no commit waiting
/// for the disk's `fsync`, and no write waiting for the write lock, holds a thread of Swift's
/// cooperative pool.
///
/// A task executor: a session runs each write statement with this executor preferred, and
/// returns to the cooperative pool after it. A commit runs as a plain call (``submit(_:)``), which
/// its session stops waiting for at the commit's deadline even when the disk holds it. Requests
/// that do not touch the database (a health check, a metrics scrape) keep every cooperative
/// thread while writers wait for the disk.
///
/// Each database owns one, started when it opens and stopped when it closes (or is freed): no
/// thread outlives its database, and one database's slow write never waits for a thread another
/// database's write holds. One thread is enough: a database has one writer connection, used by
/// one holder at a time.
final class SQLiteWriterThread: TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `state` is touched only with `condition` locked.
    private let condition = NSCondition()
    private var state = State()

    private struct State {
        var jobs: [Work] = []
        var head = 0
        var isStopping = false
        var hasExited = false
    }

    /// The thread's name, `sqlite-w-` and a number of its own in the process: what `top -H`
    /// and `/proc/<pid>/task/*/comm` show (Linux keeps 15 characters).
    let name: String

    private static let started = Atomic<Int>(0)

    /// Starts the thread.
    init() {
        name = "sqlite-w-\(Self.started.add(1, ordering: .relaxed).newValue)"
        // The thread holds the executor until it exits, after ``stop()``. Foundation's
        // `Thread.name` does not reach the system on Linux, and Glibc's module hides
        // `pthread_setname_np`: the thread names itself through its `comm` file (proc(5)).
        let thread = Thread { [self] in
            try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            serve()
        }
        thread.name = name
        thread.start()
    }

    /// What the thread runs: a task's job, or a call that no task waits on the thread for.
    private enum Work: Sendable {
        case job(UnownedJob)
        case call(@Sendable () -> Void)
    }

    /// Queues `job` for the thread.
    func enqueue(_ job: consuming ExecutorJob) {
        queue(.job(UnownedJob(job)))
    }

    /// Queues `call` for the thread: work whose caller may stop waiting for it before it ends (a
    /// commit that the disk holds past its deadline), so that no task's job is left on it.
    func submit(_ call: @escaping @Sendable () -> Void) {
        queue(.call(call))
    }

    private func queue(_ work: Work) {
        condition.lock()
        guard !state.hasExited else {
            condition.unlock()
            // Nothing runs here once the database has closed; should work come all the same, it
            // runs on a thread of its own rather than waiting for ever.
            Thread { self.perform(work) }.start()
            return
        }
        state.jobs.append(work)
        condition.signal()
        condition.unlock()
    }

    private func perform(_ work: Work) {
        switch work {
        case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        case .call(let call): call()
        }
    }

    /// Lets the thread exit once every job queued so far has run.
    func stop() {
        condition.lock()
        state.isStopping = true
        condition.signal()
        condition.unlock()
    }

    /// Runs jobs, oldest first, until stopped.
    private func serve() {
        while true {
            condition.lock()
            while state.head == state.jobs.count && !state.isStopping { condition.wait() }
            if state.head == state.jobs.count {
                state.hasExited = true
                condition.unlock()
                return
            }
            let work = state.jobs[state.head]
            state.head += 1
            if state.head == state.jobs.count {
                state.jobs.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 1024 {
                // A queue that never empties under load still gives its run jobs back.
                state.jobs.removeFirst(state.head)
                state.head = 0
            }
            condition.unlock()
            perform(work)
        }
    }
}

extension SQLiteWriterThread {
    /// Runs `body` on the thread, and returns to the caller's executor after it.
    func run<R: Sendable>(_ body: () throws -> R) async throws -> R {
        try await withTaskExecutorPreference(self) { try await Self.onPreferredExecutor(body) }
    }

    /// `@concurrent`: runs on the task's preferred executor, whatever the caller's isolation.
    @concurrent
    private static func onPreferredExecutor<R: Sendable>(_ body: () throws -> R) async throws -> R {
        try body()
    }
}
