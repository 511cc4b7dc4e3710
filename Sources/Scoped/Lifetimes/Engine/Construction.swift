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
