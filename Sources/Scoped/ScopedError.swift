/// The errors Scoped throws, each with a description that says what went wrong and how to fix it.
public enum ScopedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A required object of this type was read, but no enclosing scope set one.
    case missingObject(type: String)
    /// A service needed itself while it was being built, in one task or through constructions
    /// running in several; `chain` lists the services from the outermost, each with its lifetime.
    case cycle(chain: [String])
    /// A service read one that lives less long while it was being built (an app service a
    /// tenant's or a scope's, a tenant service a scope's): it would hold that resource past its
    /// owner's end, one tenant's for every tenant, or one request's for the life of the
    /// application.
    case captiveDependency(chain: [String])
    /// A ``ScopedLifetime/scope`` service was read outside any scope opened with `withScope`.
    case outsideScope(entry: String)
    /// A service was read, or `withScope` called, where no application root is current:
    /// outside every ``ScopeRoot``'s scopes and every test scope. `entry` is the service read,
    /// or `nil` for `withScope`.
    case outsideRoot(entry: String?)
    /// A ``ScopedLifetime/tenant`` service was read in a scope that belongs to no tenant.
    case outsideTenant(entry: String)
    /// A scope of the tenant `tenant` was opened on a root that opens no tenants: none of its
    /// observers is a ``TenantProvider``.
    case noTenantProvider(tenant: TenantID)
    /// A service was read after the scope that owns it had ended.
    case scopeEnded(entry: String)
    /// Work handed off with ``handOff(timeout:fileID:line:operation:)`` ran past its timeout and was
    /// cancelled; its scope closed as ``ScopeOutcome/cancelled``.
    case timedOut(after: Duration)

    /// A description for logs and error messages.
    public var description: String {
        switch self {
        case .missingObject(let type):
            "No \(type) in the current scope. Provide one where the scope is opened, "
                + "with `withScopedValues({ $0.set(value) }) { … }` or on the application root, "
                + "or read it as optional with `@Scoped(\(type).self) var value: \(type)?`."
        case .cycle(let chain):
            "Dependency cycle: \(chain.joined(separator: " → ")). A service cannot need itself while it is built."
        case .captiveDependency(let chain):
            "Captive dependency: \(chain.joined(separator: " → ")). A service would keep one that lives less long "
                + "(a tenant's or a scope's) after its owner ends; read that service where it is used instead."
        case .outsideScope(let entry):
            "\(entry) has scope lifetime but was read outside any scope. Open one with "
                + "`root.withScope { … }` (or `withScope { … }` inside the root's scopes) around the code that reads it."
        case .outsideRoot(let entry):
            "\(entry.map { "\($0) was read" } ?? "withScope was called") outside any application root. Create a "
                + "`ScopeRoot` at start-up and open scopes on it (`root.withScope { … }`, or the adapter of your server "
                + "framework for each request); in a test, use the `.scoped` trait or `withTestScope { … }`."
        case .outsideTenant(let entry):
            "\(entry) has tenant lifetime but was read in a scope of no tenant. Open the scope for a tenant "
                + "(`root.withScope(tenant: id) { … }`, or your server adapter's tenant resolver)."
        case .noTenantProvider(let tenant):
            "A scope of tenant \(tenant) was opened on a root that opens no tenants. Create the root with a "
                + "tenant provider: `ScopeRoot(observers: [Tenancy(…)])` (ScopedTenants)."
        case .scopeEnded(let entry):
            "\(entry) was read after the scope that owns it had ended; "
                + "work that outlives its scope must be handed off with `handOff(timeout:) { … }`."
        case .timedOut(let timeout):
            "Handed-off work was still running after its timeout of \(timeout) and was cancelled."
        }
    }
}
