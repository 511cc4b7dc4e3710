public import Scoped
import Synchronization

/// Records a root's dependency graph: which service read which while it was built, what each app
/// service read, and how long it took. Install it on the root and read `ScopeRoot.dependencyGraph()`:
///
/// ```swift
/// let root = ScopeRoot(services: [SQLiteSessionKey.self], observers: [DependencyGraphRecorder()])
/// _ = await root.validate()
/// let graph = root.dependencyGraph()!
/// print(graph.dot)  // dot -Tpng -o graph.png
/// graph.dependents(of: "sqliteDatabase")  // ["sqliteSession"]
/// ```
///
/// Each root it is installed on records on its own (a reload's new root too, which also knows
/// the services carried over to it and what they read). It takes only reads
/// (`.reads`), and costs, where it is installed, a lock of its own per
/// read made while a service is built (a request building its session) and two clock reads per
/// app service built. A root without it records nothing.
public struct DependencyGraphRecorder: ScopeObserver {
    /// A recorder for each root it is installed on.
    public init() {}

    /// The recorder of one root, which knows the services registered on it.
    public func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)? {
        RootDependencyRecorder(registered: services)
    }
}

extension ScopeRoot {
    /// Which service read which while it was built on this root and its scopes, with each
    /// service's lifetime, each app service's build time and inputs, and the reads refused as
    /// cycles or captive dependencies; `nil` when the root has no ``DependencyGraphRecorder``.
    ///
    /// Validation builds every registered service, so call it after `validate(scope:)` for the
    /// whole picture; services first built later appear once they are built.
    public func dependencyGraph() -> DependencyGraph? {
        observers(RootDependencyRecorder.self).first?.graph
    }
}

/// What one root's constructions read: edges known by their keys' identities, so that a read
/// every request repeats hashes two words under the lock and allocates nothing; the names are
/// computed once per edge, when it is new.
final class RootDependencyRecorder: ScopeObserver {
    private struct EdgeID: Hashable {
        let from: ObjectIdentifier
        let to: ObjectIdentifier
        let refused: DependencyGraph.Refusal?
    }

    private struct State {
        var lifetimes: [String: ScopedLifetime] = [:]
        var buildDurations: [String: Duration] = [:]
        var inputs: [String: [String]] = [:]
        var edges: Set<DependencyGraph.Edge> = []
        var known: Set<EdgeID> = []
    }

    private let registered: [DependencyGraph.Service]
    private let state = Mutex(State())

    init(registered services: [any ScopedServiceKey.Type]) {
        registered = services.map { DependencyGraph.Service(name: $0.name, lifetime: $0.lifetime) }
    }

    var events: ScopeObserverEvents { .reads }

    func appServiceBuilt(_ service: any ScopedServiceKey.Type, in duration: Duration?, reading inputs: [ScopeInput]) {
        // A given service's read is a dependency, shown as an edge, not an input.
        let names = inputs.filter { !$0.isService }.map(\.name)
        state.withLock { state in
            state.lifetimes[service.name] = service.lifetime
            if let duration { state.buildDurations[service.name] = duration }
            state.inputs[service.name] = names
        }
    }

    func serviceRead(_ service: any ScopedServiceKey.Type, by reader: any ScopedServiceKey.Type, refusal: ScopedError?)
    {
        let refused: DependencyGraph.Refusal?
        switch refusal {
        case nil: refused = nil
        case .cycle: refused = .cycle
        case .captiveDependency: refused = .captiveDependency
        default: return
        }
        let id = EdgeID(from: ObjectIdentifier(reader), to: ObjectIdentifier(service), refused: refused)
        state.withLock { state in
            guard state.known.insert(id).inserted else { return }
            let edge = DependencyGraph.Edge(from: reader.name, to: service.name, refused: refused)
            state.edges.insert(edge)
            state.lifetimes[edge.from] = reader.lifetime
            state.lifetimes[edge.to] = service.lifetime
        }
    }

    /// What has been recorded so far, with the services registered on the root that no recorded
    /// read involves.
    var graph: DependencyGraph {
        state.withLock { state in
            var lifetimes = state.lifetimes
            for service in registered where lifetimes[service.name] == nil {
                lifetimes[service.name] = service.lifetime
            }
            return DependencyGraph(
                services:
                    lifetimes.map {
                        DependencyGraph.Service(
                            name: $0.key,
                            lifetime: $0.value,
                            buildDuration: state.buildDurations[$0.key],
                            inputs: state.inputs[$0.key] ?? []
                        )
                    }
                    .sorted { $0.name < $1.name },
                edges: state.edges.sorted {
                    ($0.from, $0.to, $0.refused?.rawValue ?? "") < ($1.from, $1.to, $1.refused?.rawValue ?? "")
                }
            )
        }
    }
}
