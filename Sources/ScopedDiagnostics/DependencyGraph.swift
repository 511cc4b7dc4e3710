public import Scoped

/// Which service read which while it was being built, as a root with a
/// ``DependencyGraphRecorder`` recorded it.
///
/// `ScopeRoot.validate(scope:)` builds every registered service, so after validation the graph
/// holds every dependency among them, including the reads validation refused as cycles or
/// captive dependencies, marked as such. It prints as Graphviz DOT and as Mermaid, and encodes
/// as JSON.
///
/// ```swift
/// let root = ScopeRoot(services: [SQLiteSessionKey.self], observers: [DependencyGraphRecorder()])
/// _ = await root.validate()
/// let graph = root.dependencyGraph()!
/// print(graph.dot)  // dot -Tpng -o graph.png
/// graph.dependents(of: "sqliteDatabase")  // ["sqliteSession"]
/// ```
public struct DependencyGraph: Hashable, Sendable, Codable {
    /// A service and its lifetime.
    public struct Service: Hashable, Sendable, Codable {
        /// The service's name.
        public var name: String
        /// Who owns it, and how long it lives.
        public var lifetime: ScopedLifetime
        /// How long its construction took, for an app service built on this root; `nil` for
        /// scope services (built once per scope) and for services not built yet.
        public var buildDuration: Duration?
        /// The entries and objects an app service read while it was built, in the order first read.
        ///
        /// What a reload compares to decide whether to carry it over. Empty for scope services
        /// and for services not built yet.
        public var inputs: [String]

        /// A service with this name and lifetime, built in `buildDuration` if known, having
        /// read `inputs`.
        public init(name: String, lifetime: ScopedLifetime, buildDuration: Duration? = nil, inputs: [String] = []) {
            self.name = name
            self.lifetime = lifetime
            self.buildDuration = buildDuration
            self.inputs = inputs
        }
    }

    /// Why a read was refused.
    public enum Refusal: String, Hashable, Sendable, Codable {
        /// The service needed itself.
        case cycle
        /// An app service read a scope service.
        case captiveDependency
    }

    /// One service's construction reading another.
    public struct Edge: Hashable, Sendable, Codable {
        /// The service being built.
        public var from: String
        /// The service it read.
        public var to: String
        /// Why the read was refused; `nil` for a read that was served.
        public var refused: Refusal?

        /// `from`'s construction reading `to`, refused for `refused` if not `nil`.
        public init(from: String, to: String, refused: Refusal? = nil) {
            self.from = from
            self.to = to
            self.refused = refused
        }
    }

    /// Every service built or read during a construction, by name.
    public var services: [Service]
    /// Every read made during a construction, sorted by reader, then by the service read.
    public var edges: [Edge]

    /// A graph of these services and reads.
    public init(services: [Service], edges: [Edge]) {
        self.services = services
        self.edges = edges
    }

    /// The app services built on this root and how long each took, slowest first: the
    /// start-up report a server logs after validation.
    public var appServiceBuilds: [(name: String, duration: Duration)] {
        services.compactMap { service in service.buildDuration.map { (service.name, $0) } }
            .sorted { $0.duration > $1.duration || ($0.duration == $1.duration && $0.name < $1.name) }
    }

    /// The services that depend on `name`, directly or through others, sorted by name.
    public func dependents(of name: String) -> [String] {
        var found: Set<String> = []
        var pending = [name]
        while let current = pending.popLast() {
            for edge in edges where edge.to == current && edge.refused == nil && found.insert(edge.from).inserted {
                pending.append(edge.from)
            }
        }
        return found.sorted()
    }

    /// The graph in Graphviz's DOT language: app services as boxes, scope services as
    /// ellipses, refused reads as red dashed edges labelled with the reason.
    public var dot: String {
        var lines = ["digraph dependencies {", "    rankdir=LR;", "    node [fontname=\"Helvetica\"];"]
        for service in services {
            let shape = service.lifetime == .app ? "box" : "ellipse"
            lines.append("    \"\(service.name)\" [shape=\(shape), label=\"\(service.name)\\n(\(service.lifetime))\"];")
        }
        for edge in edges {
            let attributes =
                edge.refused.map { " [color=red, style=dashed, label=\"\(Self.label($0))\"]" } ?? ""
            lines.append("    \"\(edge.from)\" -> \"\(edge.to)\"\(attributes);")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The graph as a Mermaid flowchart: app services as rectangles, scope services as rounded
    /// boxes, refused reads as dotted edges labelled with the reason.
    public var mermaid: String {
        var ids: [String: String] = [:]
        for (index, service) in services.enumerated() { ids[service.name] = "s\(index)" }
        var lines = ["flowchart LR"]
        for service in services {
            let id = ids[service.name]!
            let text = "\(service.name)<br/>(\(service.lifetime))"
            lines.append(service.lifetime == .app ? "    \(id)[\"\(text)\"]" : "    \(id)(\"\(text)\")")
        }
        for edge in edges {
            guard let from = ids[edge.from], let to = ids[edge.to] else { continue }
            if let refusal = edge.refused {
                lines.append("    \(from) -. \(Self.label(refusal)) .-> \(to)")
            } else {
                lines.append("    \(from) --> \(to)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
