/// One service construction in progress, named by the scope building it and the service's key:
/// a scope builds a key once at a time.
///
/// So that a task about to wait for a construction can tell whether that construction is,
/// through other tasks, waiting for this one (``ConstructionGraph``): a cycle across tasks,
/// which would otherwise never finish. A value rather than an object, so that building a
/// service allocates nothing to record its construction.
struct Construction: Hashable, Sendable {
    let link: ConstructionChain.Link
    /// The scope building the service, held so that its identity cannot be reused while this
    /// construction is remembered.
    let scope: ScopeContext

    /// `name (lifetime)`, as cycle errors show it; built only for an error.
    var label: String { link.label }

    static func == (lhs: Construction, rhs: Construction) -> Bool {
        ObjectIdentifier(lhs.link.key) == ObjectIdentifier(rhs.link.key) && lhs.scope === rhs.scope
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(link.key))
        hasher.combine(ObjectIdentifier(scope))
    }
}
