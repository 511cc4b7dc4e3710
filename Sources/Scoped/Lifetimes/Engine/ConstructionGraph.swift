import Synchronization

/// Which constructions wait for which, across every task.
///
/// A construction waits for another while its task, or a task it started, waits for that one to finish.
enum ConstructionGraph {
    private static let waits = Mutex<[Construction: [Construction]]>([:])

    /// Records that `waiting` (the constructions the current task is inside, outermost first)
    /// now waits for `target`, unless `target` already waits, directly or through others, for
    /// one of them.
    ///
    /// A task that is building nothing cannot close a cycle: with `waiting` empty, nothing is
    /// checked or recorded.
    ///
    /// - Throws: ``ScopedError/cycle(chain:)`` naming the constructions around the cycle.
    static func beginWait(_ waiting: [Construction], for target: Construction) throws {
        guard !waiting.isEmpty else { return }
        try waits.withLock { waits in
            if let path = path(from: target, toAnyOf: waiting, in: waits) {
                let start = waiting.firstIndex { $0 == path.last! }!
                let labels = waiting[start...].map(\.label) + path.map(\.label)
                throw ScopedError.cycle(chain: labels)
            }
            for construction in waiting { waits[construction, default: []].append(target) }
        }
    }

    /// Removes what ``beginWait(_:for:)`` recorded.
    static func endWait(_ waiting: [Construction], for target: Construction) {
        guard !waiting.isEmpty else { return }
        waits.withLock { waits in
            for construction in waiting {
                let id = construction
                guard var targets = waits[id], let index = targets.firstIndex(of: target) else {
                    continue
                }
                targets.remove(at: index)
                waits[id] = targets.isEmpty ? nil : targets
            }
        }
    }

    /// A path of waits from `start` that ends at one of `ends`, `start` first; nil if none.
    private static func path(
        from start: Construction,
        toAnyOf ends: [Construction],
        in waits: [Construction: [Construction]]
    ) -> [Construction]? {
        var visited: Set<Construction> = []
        var stack: [[Construction]] = [[start]]
        while let path = stack.popLast() {
            let last = path.last!
            if ends.contains(last) { return path }
            guard visited.insert(last).inserted else { continue }
            for next in waits[last] ?? [] { stack.append(path + [next]) }
        }
        return nil
    }
}
