// What every user of this module needs with it: `import ScopedHummingbird` alone gives a file the core's
// ScopedValues, ScopeRoot, @Entry and the rest, and ScopedServiceLifecycle's `ScopeRootService`, which
// `Application.addScopeRoot(_:)` takes. (An underscored attribute, as Vapor and postgres-nio use it:
// Swift has no other spelling of a re-export yet.)
@_documentation(visibility: internal) @_exported import Scoped
@_documentation(visibility: internal) @_exported import ScopedServiceLifecycle
