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
