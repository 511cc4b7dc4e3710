import Synchronization

/// Records, for an application root, which service read which while it was being built, and
/// which reads were refused as cycles or captive dependencies: the data of
/// ``ScopeRoot/dependencyGraph()``.
///
/// Only reads made during a construction are recorded. The same read is made again by every
/// request that builds the same scope service, so an edge is known by its two keys' type
/// identities, in a set under a lock of its own: recording an edge already known hashes three
/// words under that lock and allocates nothing. The names are computed, and the graph's lock
/// taken, once per edge, when it is new. A read of an app service the root has published
/// (a request's session reading its database) does not reach the set after its first:
/// `PublishedService` knows its readers, under the lock the read takes anyway.
///
/// A lock, not a lock-free list of `AtomicLazyReference` links: the standard library does not
/// inline `AtomicLazyReference.load()`, which then looks up its generic metadata on every call,
/// 130 ns a link on this project's machine where a lock taken and released costs 15 ns
/// (session 35).
package final class DependencyRecorder: Sendable {
    /// An edge by its keys' identities.
    private struct EdgeID: Hashable, Sendable {
        let from: ObjectIdentifier
        let to: ObjectIdentifier
        let refused: DependencyGraph.Refusal?
    }

    private struct State {
        var lifetimes: [String: ScopedLifetime] = [:]
        /// How long each app service took to build.
        var buildDurations: [String: Duration] = [:]
        /// What each app service read while it was built.
        var inputs: [String: ServiceInputs] = [:]
        var edges: Set<DependencyGraph.Edge> = []
    }

    private let state = Mutex(State())
    /// The edges recorded so far, by their keys' identities.
    private let knownEdges = Mutex(Set<EdgeID>())

    package init() {}

    /// Records how long an app service took to build, and what it read meanwhile.
    func appServiceBuilt(_ link: ConstructionChain.Link, in duration: Duration, inputs: ServiceInputs) {
        state.withLock { state in
            state.lifetimes[link.key.name] = link.lifetime
            state.buildDurations[link.key.name] = duration
            state.inputs[link.key.name] = inputs
        }
    }

    /// Records an app service carried over from a previous root's recorder, as that one knew it.
    func carriedOver(_ name: String, from previous: DependencyRecorder) {
        let (lifetime, duration, inputs, edges) = previous.state.withLock { state in
            (
                state.lifetimes[name], state.buildDurations[name], state.inputs[name],
                state.edges.filter { $0.from == name }
            )
        }
        state.withLock { state in
            state.lifetimes[name] = lifetime
            state.buildDurations[name] = duration
            state.inputs[name] = inputs
            state.edges.formUnion(edges)
        }
    }

    /// What the app service `name` read while it was built; `nil` when it was not built here.
    func inputs(of name: String) -> ServiceInputs? {
        state.withLock { $0.inputs[name] }
    }

    /// The services `name` read while it was built.
    func dependencies(of name: String) -> [String] {
        state.withLock { state in state.edges.filter { $0.from == name && $0.refused == nil }.map(\.to) }
    }

    /// Checks that the current task may read `link` (``ConstructionChain/check(_:)``), and
    /// records the read, or its refusal, when the task is building a service.
    ///
    /// - Parameters:
    ///   - link: the service about to be read.
    ///   - chain: the constructions the current task is inside.
    ///   - recordingRead: whether a read that passes the check is recorded; `false` where the
    ///     read fails anyway.
    /// - Throws: ``ScopedError/cycle(chain:)`` or ``ScopedError/captiveDependency(chain:)``.
    func check(_ link: ConstructionChain.Link, in chain: ConstructionChain, recordingRead: Bool = true) throws {
        guard let reader = chain.innermost?.link else { return }
        do {
            try chain.check(link)
        } catch let error as ScopedError {
            recordRefusal(by: reader, of: link, error)
            throw error
        }
        if recordingRead { recordRead(by: reader, of: link) }
    }

    /// Records that the service `reader` was building read `read`.
    func recordRead(by reader: ConstructionChain.Link, of read: ConstructionChain.Link) {
        record(reader, read, refused: nil)
    }

    /// Records that `reader` was refused `read`, as `error` says.
    func recordRefusal(by reader: ConstructionChain.Link, of read: ConstructionChain.Link, _ error: ScopedError) {
        let refusal: DependencyGraph.Refusal
        switch error {
        case .cycle: refusal = .cycle
        case .captiveDependency: refusal = .captiveDependency
        default: return
        }
        record(reader, read, refused: refusal)
    }

    private func record(
        _ reader: ConstructionChain.Link,
        _ read: ConstructionChain.Link,
        refused: DependencyGraph.Refusal?
    ) {
        let id = EdgeID(from: ObjectIdentifier(reader.key), to: ObjectIdentifier(read.key), refused: refused)
        guard insertKnown(id) else { return }
        let edge = DependencyGraph.Edge(from: reader.key.name, to: read.key.name, refused: refused)
        state.withLock { state in
            state.edges.insert(edge)
            state.lifetimes[edge.from] = reader.lifetime
            state.lifetimes[edge.to] = read.lifetime
        }
    }

    /// Adds `id` to the known edges unless it is there already; returns whether it was new.
    private func insertKnown(_ id: EdgeID) -> Bool {
        knownEdges.withLock { $0.insert(id).inserted }
    }

    /// What has been recorded so far, with the services `registered` on the root that no
    /// recorded read involves.
    func graph(registered: [DependencyGraph.Service]) -> DependencyGraph {
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
                            inputs: state.inputs[$0.key]?.all.filter { !$0.isService }.map(\.name) ?? []
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
