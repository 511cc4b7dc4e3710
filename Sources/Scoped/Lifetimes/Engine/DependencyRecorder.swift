import Synchronization

/// Records, for an application root, which service read which while it was being built, and
/// which reads were refused as cycles or captive dependencies: the data of
/// ``ScopeRoot/dependencyGraph()``.
///
/// A read of a service already built costs one atomic load here while no construction is in
/// flight on the root, and a construction two atomic additions; only reads made during a
/// construction look up the reader and take the lock.
package final class DependencyRecorder: Sendable {
    private struct State {
        var lifetimes: [String: ScopedLifetime] = [:]
        /// How long each app service took to build.
        var buildDurations: [String: Duration] = [:]
        var edges: Set<DependencyGraph.Edge> = []
    }

    private let state = Mutex(State())
    private let constructions = Atomic<Int>(0)

    package init() {}

    /// Whether some task is building a service of this root now.
    var isConstructing: Bool { constructions.load(ordering: .relaxed) > 0 }

    /// Counts a construction as started.
    func constructionBegan() {
        constructions.wrappingAdd(1, ordering: .relaxed)
    }

    /// Records how long an app service took to build.
    func appServiceBuilt(_ link: ConstructionChain.Link, in duration: Duration) {
        state.withLock { state in
            state.lifetimes[link.key.name] = link.lifetime
            state.buildDurations[link.key.name] = duration
        }
    }

    /// Counts a construction as ended.
    func constructionEnded() {
        constructions.wrappingSubtract(1, ordering: .relaxed)
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
        record(DependencyGraph.Edge(from: reader.key.name, to: read.key.name, refused: nil), reader, read)
    }

    /// Records that `reader` was refused `read`, as `error` says.
    func recordRefusal(by reader: ConstructionChain.Link, of read: ConstructionChain.Link, _ error: ScopedError) {
        let refusal: DependencyGraph.Refusal
        switch error {
        case .cycle: refusal = .cycle
        case .captiveDependency: refusal = .captiveDependency
        default: return
        }
        record(DependencyGraph.Edge(from: reader.key.name, to: read.key.name, refused: refusal), reader, read)
    }

    private func record(_ edge: DependencyGraph.Edge, _ reader: ConstructionChain.Link, _ read: ConstructionChain.Link)
    {
        state.withLock { state in
            guard state.edges.insert(edge).inserted else { return }
            state.lifetimes[reader.key.name] = reader.lifetime
            state.lifetimes[read.key.name] = read.lifetime
        }
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
                            buildDuration: state.buildDurations[$0.key]
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
