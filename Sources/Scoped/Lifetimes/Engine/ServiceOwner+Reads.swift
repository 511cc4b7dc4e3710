/// The reads a construction makes: checked for cycles and captive dependencies, and told to the
/// root's observers.
extension ServiceOwner {
    /// Throws if the construction of `reader` may not read `link` now (a cycle, a captive
    /// dependency); tells the root's observers of the read or its refusal.
    func checkRead(
        of link: ConstructionChain.Link,
        by reader: ConstructionChain.Link,
        in chain: ConstructionChain
    ) throws {
        try check(link, readBy: reader, in: chain)
        tellRead(of: link, by: reader, refusal: nil)
    }

    /// Throws what reading `link` from the current task's construction, if any, would be
    /// refused with (a cycle, a captive dependency), told to the root's observers; for a read
    /// that fails anyway.
    func checkRefusedRead(of link: ConstructionChain.Link) throws {
        let chain = ConstructionChain.ofCurrentTask
        guard let reader = chain.innermost?.link else { return }
        try check(link, readBy: reader, in: chain)
    }

    /// Throws if `reader`'s construction may not read `link` (``ConstructionChain/check(_:)``),
    /// and tells the refusal to the root's observers.
    private func check(
        _ link: ConstructionChain.Link,
        readBy reader: ConstructionChain.Link,
        in chain: ConstructionChain
    ) throws {
        do {
            try chain.check(link)
        } catch let error as ScopedError {
            tellRead(of: link, by: reader, refusal: error)
            throw error
        }
    }

    /// Tells the observers that take it of `reader`'s read of `link`.
    private func tellRead(of link: ConstructionChain.Link, by reader: ConstructionChain.Link, refusal: ScopedError?) {
        let byAppService = reader.lifetime == .app
        guard byAppService ? registry.observers.observeAppReads : registry.observers.observeReads else { return }
        registry.observers.serviceRead(link.key, by: reader.key, byAppService: byAppService, refusal: refusal)
    }
}
