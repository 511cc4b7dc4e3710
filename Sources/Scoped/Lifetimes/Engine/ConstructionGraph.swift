import Synchronization

/// One service construction in progress, so that a task about to wait for it can tell whether
/// that construction is, through other tasks, waiting for this one: a cycle across tasks, which
/// would otherwise never finish.
final class Construction: Sendable {
    let link: ConstructionChain.Link
    /// The construction the building task was inside when it started this one.
    let parent: Construction?

    init(_ link: ConstructionChain.Link, parent: Construction?) {
        self.link = link
        self.parent = parent
    }

    /// `name (lifetime)`, as cycle errors show it; built only for an error.
    var label: String { link.label }
}

/// Which constructions wait for which, across every task.
///
/// A construction waits for another while its task, or a task it started, waits for that one to finish.
enum ConstructionGraph {
    private static let waits = Mutex<[ObjectIdentifier: [Construction]]>([:])

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
                let start = waiting.firstIndex { $0 === path.last! }!
                let labels = waiting[start...].map(\.label) + path.map(\.label)
                throw ScopedError.cycle(chain: labels)
            }
            for construction in waiting { waits[ObjectIdentifier(construction), default: []].append(target) }
        }
    }

    /// Removes what ``beginWait(_:for:)`` recorded.
    static func endWait(_ waiting: [Construction], for target: Construction) {
        guard !waiting.isEmpty else { return }
        waits.withLock { waits in
            for construction in waiting {
                let id = ObjectIdentifier(construction)
                guard var targets = waits[id], let index = targets.firstIndex(where: { $0 === target }) else {
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
        in waits: [ObjectIdentifier: [Construction]]
    ) -> [Construction]? {
        var visited: Set<ObjectIdentifier> = []
        var stack: [[Construction]] = [[start]]
        while let path = stack.popLast() {
            let last = path.last!
            if ends.contains(where: { $0 === last }) { return path }
            guard visited.insert(ObjectIdentifier(last)).inserted else { continue }
            for next in waits[ObjectIdentifier(last)] ?? [] { stack.append(path + [next]) }
        }
        return nil
    }
}
