import Synchronization

/// The services being built by the current task, outermost first, for cycle and captive
/// dependency detection.
struct ConstructionChain: Sendable {
    /// A service about to be built: its key and lifetime.
    struct Link: Sendable {
        let key: any ScopedServiceKey.Type
        let lifetime: ScopedLifetime

        init(erasing key: any ScopedServiceKey.Type) {
            self.key = key
            self.lifetime = key.lifetime
        }

        var label: String { "\(key.name) (\(lifetime))" }
    }

    @TaskLocal static var current = ConstructionChain()

    /// The calling task's chain: empty outside any construction.
    static var ofCurrentTask: ConstructionChain { current }

    /// The innermost construction the current task is building.
    private(set) var innermost: Construction?

    /// The constructions around the innermost, innermost first: `nil` outside a nested build,
    /// so that entering a construction that is not nested allocates nothing.
    private var outer: Outer?

    /// A construction around the innermost, and the ones around it.
    private final class Outer: Sendable {
        let construction: Construction
        let next: Outer?

        init(_ construction: Construction, next: Outer?) {
            self.construction = construction
            self.next = next
        }
    }

    /// This chain with `construction` inside its innermost.
    func appending(_ construction: Construction) -> ConstructionChain {
        ConstructionChain(innermost: construction, outer: innermost.map { Outer($0, next: outer) })
    }

    /// The constructions the current task is inside, innermost first.
    private var innermostFirst: some Sequence<Construction> {
        sequence(state: (innermost, outer)) { state -> Construction? in
            guard let construction = state.0 else { return nil }
            state = (state.1?.construction, state.1?.next)
            return construction
        }
    }

    /// Throws if building `link` now would be a cycle or make a service hold one that lives
    /// less long: an app service a tenant's or a scope's, a tenant service a scope's.
    func check(_ link: Link) throws {
        guard innermost != nil else { return }
        var captive = false
        for current in innermostFirst {
            if ObjectIdentifier(current.link.key) == ObjectIdentifier(link.key) {
                throw ScopedError.cycle(chain: describe(with: link))
            }
            if current.link.lifetime.outlives(link.lifetime) { captive = true }
        }
        if captive {
            throw ScopedError.captiveDependency(chain: describe(with: link))
        }
    }

    /// The constructions the current task is inside, outermost first.
    var constructions: [Construction] {
        innermostFirst.reversed()
    }

    private func describe(with link: Link) -> [String] {
        constructions.map(\.label) + [link.label]
    }
}

/// One service construction in progress, named by the scope building it and the service's key:
/// a scope builds a key once at a time.
///
/// So that a task about to wait for a construction can tell whether that construction is,
/// through other tasks, waiting for this one (``ConstructionGraph``): a cycle across tasks,
/// which would otherwise never finish. A value rather than an object, so that building a
/// service allocates nothing to record its construction.
///
/// The scope is named by its identity, not held: a construction is copied into every chain and
/// entry that mentions it, and holding the scope was four retains and releases per service
/// built. An identity can be reused once its scope is gone, but a construction outlives its
/// scope only in a chain an unstructured `Task` inherited inside a `makeValue` and kept past it;
/// there, a wait could at worst be refused as a cycle that is not one.
struct Construction: Hashable, Sendable {
    let link: ConstructionChain.Link
    /// The scope building the service.
    let scope: ObjectIdentifier

    init(link: ConstructionChain.Link, scope: ServiceOwner) {
        self.link = link
        self.scope = ObjectIdentifier(scope)
    }

    /// `name (lifetime)`, as cycle errors show it; built only for an error.
    var label: String { link.label }

    static func == (lhs: Construction, rhs: Construction) -> Bool {
        ObjectIdentifier(lhs.link.key) == ObjectIdentifier(rhs.link.key) && lhs.scope == rhs.scope
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(link.key))
        hasher.combine(scope)
    }
}

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
