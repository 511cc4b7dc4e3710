/// The services being built by the current task, outermost first, for cycle and captive
/// dependency detection.
struct ConstructionChain: Sendable {
    struct Link: Sendable {
        let key: any ScopedServiceKey.Type
        let lifetime: ScopedLifetime
        /// The construction this link stands for, once the current task has become its builder.
        var construction: Construction?

        init<K: ScopedServiceKey>(_ key: K.Type) {
            self.key = key
            self.lifetime = K.lifetime
        }

        var label: String { "\(key.name) (\(lifetime))" }
    }

    @TaskLocal static var current = ConstructionChain()

    private(set) var links: [Link] = []

    func appending(_ link: Link) -> ConstructionChain {
        var chain = self
        chain.links.append(link)
        return chain
    }

    /// Throws if building `link` now would be a cycle or make an app service hold a scoped one.
    func check(_ link: Link) throws {
        if links.isEmpty { return }
        if links.contains(where: { ObjectIdentifier($0.key) == ObjectIdentifier(link.key) }) {
            throw ScopedError.cycle(chain: describe(with: link))
        }
        if link.lifetime == .scope, links.contains(where: { $0.lifetime == .app }) {
            throw ScopedError.captiveDependency(chain: describe(with: link))
        }
    }

    /// The constructions the current task is inside, outermost first.
    var constructions: [Construction] { links.compactMap(\.construction) }

    private func describe(with link: Link) -> [String] {
        (links + [link]).map(\.label)
    }
}
