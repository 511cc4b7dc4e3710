// What every user of this module needs with it: `import ScopedTenants` alone gives a file the
// core's ScopedValues, ScopeRoot, @Entry and the rest. (An underscored attribute, as Vapor and
// postgres-nio use it: Swift has no other spelling of a re-export yet.)
@_documentation(visibility: internal) @_exported import Scoped
