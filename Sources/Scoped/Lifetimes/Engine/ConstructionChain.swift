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
