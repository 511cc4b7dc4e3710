/// The errors Scoped throws, each with a description that says what went wrong and how to fix it.
public enum ScopedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A required object of this type was read, but no enclosing scope set one.
    case missingObject(type: String)

    public var description: String {
        switch self {
        case .missingObject(let type):
            "No \(type) in the current scope. Provide one where the scope is opened, "
                + "with `withScopedValues({ $0.set(value) }) { … }` or on the application root, "
                + "or read it as optional with `@Scoped(\(type).self) var value: \(type)?`."
        }
    }
}
