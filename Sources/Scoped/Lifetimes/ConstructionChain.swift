/// The services being built by the current task, outermost first, for cycle and captive
/// dependency detection.
struct ConstructionChain: Sendable {
    struct Link: Sendable, Equatable {
        let key: ObjectIdentifier
        let name: String
        let lifetime: ScopedLifetime
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
        if links.contains(where: { $0.key == link.key }) {
            throw ScopedError.cycle(chain: describe(with: link))
        }
        if link.lifetime == .scope, links.contains(where: { $0.lifetime == .app }) {
            throw ScopedError.captiveDependency(chain: describe(with: link))
        }
    }

    private func describe(with link: Link) -> [String] {
        (links + [link]).map { "\($0.name) (\($0.lifetime))" }
    }
}
