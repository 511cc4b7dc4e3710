import Scoped

/// An observer told of the reloads that replace its root or make it current.
///
/// Installed on a root like any `ScopeObserver` (`ScopeRoot(observers:)`): a reload tells
/// the observers of the root it would replace when it is rejected, and those of the new root
/// when it is applied. ScopedInstrumentation counts reloads this way.
public protocol ReloadObserver: ScopeObserver {
    /// A reload that would replace this root (`applied == false`: it was rejected, and this
    /// root stays), or that made this root current (`applied`), as generation `generation`.
    func rootReloaded(generation: Int, applied: Bool)
}

extension ScopeRoot {
    /// Tells this root's reload observers of a reload to generation `generation`.
    func tellReloaded(generation: Int, applied: Bool) {
        for observer in observers((any ReloadObserver).self) {
            observer.rootReloaded(generation: generation, applied: applied)
        }
    }
}
