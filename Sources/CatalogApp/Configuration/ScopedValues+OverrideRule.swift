import Scoped

extension ScopedValues {
    /// The per-request override rule the root's configuration has, if any: each request follows
    /// its root's, so a reload changes it for the requests that begin after it.
    @Entry var overrideRule: AppConfiguration.OverrideRule? = nil
}
