/// The reads a construction makes: checked for cycles and captive dependencies, told to the
/// root's observers, and, for an app service's construction, recorded for a reload.
extension ScopeContext {
    /// Throws if the construction of `reader` may not read `link` now (a cycle, a captive
    /// dependency); tells the root's observers of the read or its refusal, and records an app
    /// service's reads for a reload.
    func checkRead(
        of link: ConstructionChain.Link,
        by reader: ConstructionChain.Link,
        in chain: ConstructionChain
    ) throws {
        try check(link, readBy: reader, in: chain)
        if reader.lifetime == .app { registry.appServices.recordRead(by: reader.key, of: link.key) }
        if registry.observers.observeReads { registry.observers.serviceRead(link.key, by: reader.key, refusal: nil) }
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
            if registry.observers.observeReads {
                registry.observers.serviceRead(link.key, by: reader.key, refusal: error)
            }
            throw error
        }
    }
}
