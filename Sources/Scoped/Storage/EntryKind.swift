/// What kind of entry a scope describes.
public enum EntryKind: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// A plain value, declared with `@Entry` or a ``ScopedKey``.
    case value
    /// An object stored under its type with ``ScopedValues/set(_:)``.
    case object
    /// A service with a ``ScopedLifetime``, declared with a ``ScopedServiceKey``.
    case service

    /// A description for logs and error messages.
    public var description: String { rawValue }
}
