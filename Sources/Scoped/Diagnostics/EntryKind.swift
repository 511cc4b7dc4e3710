/// What kind of entry a scope describes.
public enum EntryKind: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// A plain value, declared with `@Entry` or a ``ScopedKey``.
    case value
    /// An object stored under its type with ``ScopedValues/set(_:)``.
    case object
    /// A service built once per application root.
    case app
    /// A service built once per scope and closed when the scope ends.
    case scope

    init(_ lifetime: ScopedLifetime) {
        self = lifetime == .app ? .app : .scope
    }

    public var description: String { rawValue }
}
