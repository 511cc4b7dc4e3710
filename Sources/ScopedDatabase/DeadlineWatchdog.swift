import Synchronization

/// Ends database work that runs past its deadline.
///
/// A statement registers its deadline and how to end it (interrupt it, close its connection);
/// one task per process wakes every ``tick`` while any deadline is registered and ends what
/// expired. It costs a statement two short locked steps instead of a timer task each, and it
/// does not depend on the statement's thread: a SQLite statement blocked in the disk is
/// interrupted from the cooperative pool.
package final class DeadlineWatchdog: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var isWatching = false
    }

    /// The process's watchdog.
    package static let shared = DeadlineWatchdog(tick: .milliseconds(20))

    /// How often the watching task looks for expired deadlines: a deadline is enforced at most
    /// this late.
    package let tick: Duration
    private let state = Mutex(State())

    package init(tick: Duration) {
        self.tick = tick
    }

    /// Runs `body`, calling `expire` if it is still running after `timeout`.
    ///
    /// `expire` must make `body` return soon (interrupt the statement, close the connection);
    /// it runs on another task, at most once.
    ///
    /// - Throws: ``DatabaseTimeoutError`` for `operation` on `entry` when `body` threw after
    ///   its deadline expired; otherwise what `body` throws.
    package func run<R>(
        within timeout: Duration,
        operation: DatabaseTimeoutError.Operation,
        entry: String,
        expire: @escaping @Sendable () -> Void,
        _ body: () async throws -> R
    ) async throws -> R {
        let id = register(Entry(deadline: .now + timeout, expire: expire))
        do {
            let result = try await body()
            _ = unregister(id)
            return result
        } catch {
            guard unregister(id) else {
                throw DatabaseTimeoutError(operation: operation, timeout: timeout, entry: entry)
            }
            throw error
        }
    }

    private func register(_ entry: Entry) -> UInt64 {
        let (id, startWatching) = state.withLock { state in
            state.nextID += 1
            state.entries[state.nextID] = entry
            defer { state.isWatching = true }
            return (state.nextID, !state.isWatching)
        }
        if startWatching {
            // Ends itself once no deadline is registered.
            Task.detached { await self.watch() }
        }
        return id
    }

    /// Removes a deadline; `false` when it had expired already.
    private func unregister(_ id: UInt64) -> Bool {
        state.withLock { $0.entries.removeValue(forKey: id) != nil }
    }

    private func watch() async {
        while true {
            try? await Task.sleep(for: tick)
            let now = ContinuousClock.now
            let (expired, keepWatching) = state.withLock { state in
                let expired = state.entries.filter { $0.value.deadline <= now }
                for id in expired.keys { state.entries[id] = nil }
                state.isWatching = !state.entries.isEmpty
                return (Array(expired.values), state.isWatching)
            }
            for entry in expired { entry.expire() }
            guard keepWatching else { return }
        }
    }
}
