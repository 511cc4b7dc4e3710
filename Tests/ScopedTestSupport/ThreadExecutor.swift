public import Foundation

/// A serial executor on a thread of its own, which the test can stop for a while.
public final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `work` is touched only with `condition` locked.
    private let condition = NSCondition()
    private var work: [() -> Void] = []
    private var stopped = false

    /// Starts the thread.
    public init() {
        Thread { [self] in
            while true {
                condition.lock()
                while work.isEmpty && !stopped { condition.wait() }
                if work.isEmpty {
                    condition.unlock()
                    return
                }
                let next = work.removeFirst()
                condition.unlock()
                next()
            }
        }
        .start()
    }

    private func append(_ item: @escaping () -> Void) {
        condition.lock()
        work.append(item)
        condition.signal()
        condition.unlock()
    }

    /// Queues `job` for the thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        append { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    /// Holds the thread, after what is queued now, until `semaphore` is signalled.
    public func block(until semaphore: DispatchSemaphore) {
        append { semaphore.wait() }
    }

    /// Lets the thread exit once its queue is empty.
    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }
}
