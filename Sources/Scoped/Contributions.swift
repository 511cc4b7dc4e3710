/// A list that several places contribute to: the value of an entry that no single place knows
/// all of, such as the health checks, exporters or plugins of an application's modules.
///
/// Declare the entry once, with an empty list as its default:
///
/// ```swift
/// extension ScopedValues {
///     @Entry var healthChecks: Contributions<any HealthCheck> = Contributions()
/// }
/// ```
///
/// Each module then contributes where it configures the root, without knowing the others; a
/// scope may add to the list for its own work, and the scopes it opens inherit the longer list:
///
/// ```swift
/// let root = ScopeRoot(services: [DatabaseCheckKey.self]) {
///     $0.contribute(ProcessCheck(), to: \.healthChecks)
///     $0.contribute(DatabaseCheckKey.self, to: \.healthChecks) { $0 }  // an app service
/// }
/// ```
///
/// The order is defined: the contributions of the root in the order they were made, then those
/// of each scope below it, outermost first. A value is kept as it is; an app service (any
/// ``ScopedServiceKey``) is read where the list is read, so it is built once by its owner and
/// closed with the root's other services, in reverse order of building. Read the elements with
/// ``elements()``; ``contributions`` lists what was contributed, by whom, without reading
/// anything, and ScopedDiagnostics' `describe()` shows it for each list entry.
///
/// Reading the entry costs what reading any entry costs: the list is a value of the scope, like
/// an array.
public struct Contributions<Element: Sendable>: Sendable {
    /// One contribution: what it is and where it was made.
    public struct Contribution: Sendable, CustomStringConvertible {
        /// For a value, its type (`CatalogApp.DatabaseCheck`); for a service, the service's name.
        public let name: String
        /// Whether it is an app service, read where the list is read, rather than a value.
        public let isService: Bool
        /// The file it was contributed in, as `#fileID` names it.
        public let fileID: String
        /// The line it was contributed on.
        public let line: Int
        /// The depth of the scope that contributed it: 0 for the application root.
        public let depth: Int
        fileprivate let element: @Sendable (ScopedValues) async throws -> Element

        /// `"service databaseCheck from CatalogApp/Health.swift:12 at depth 0"`.
        public var description: String {
            "\(isService ? "service " : "")\(name) from \(fileID):\(line) at depth \(depth)"
        }
    }

    /// What was contributed, in order.
    public private(set) var contributions: [Contribution] = []

    /// An empty list: the default of a list entry.
    public init() {}

    fileprivate mutating func append(_ contribution: Contribution) {
        contributions.append(contribution)
    }

    /// The elements, in order: each value as it was contributed, each service read in the
    /// current scope (built by its owner on first use).
    ///
    /// - Throws: what reading a contributed service throws.
    public func elements() async throws -> [Element] {
        let values = ScopedValues.current
        var elements: [Element] = []
        elements.reserveCapacity(contributions.count)
        for contribution in contributions { elements.append(try await contribution.element(values)) }
        return elements
    }
}

/// Contributing to a list entry: each contribution remembers where it was made.
extension ScopedValues {
    /// Appends `element` to the list `list` names, at the end of what these values hold.
    ///
    /// - Parameters:
    ///   - element: the contribution, kept as it is.
    ///   - list: the list entry.
    ///   - fileID: where it is contributed, for ``Contributions/contributions`` and `describe()`.
    ///   - line: the line it is contributed on.
    public mutating func contribute<Element: Sendable>(
        _ element: Element,
        to list: WritableKeyPath<ScopedValues, Contributions<Element>>,
        fileID: String = #fileID,
        line: Int = #line
    ) {
        // Named for its dynamic type: `Element` may be an existential.
        let contribution = Contributions<Element>
            .Contribution(
                name: String(reflecting: type(of: element as Any)),
                isService: false,
                fileID: fileID,
                line: line,
                depth: depth,
                element: { _ in element }
            )
        self[keyPath: list].append(contribution)
    }

    /// Appends the service `key` to the list `list` names: it is read, as `element` makes it
    /// an element, each time the list's elements are read, so it is built once by its owner and
    /// closed as any service of its lifetime is.
    ///
    /// - Parameters:
    ///   - key: the service; register it on the root, so that validation builds it.
    ///   - list: the list entry.
    ///   - fileID: where it is contributed.
    ///   - line: the line it is contributed on.
    ///   - element: the service as an element of the list (`{ $0 }` where it converts).
    public mutating func contribute<Key: ScopedServiceKey, Element: Sendable>(
        _ key: Key.Type,
        to list: WritableKeyPath<ScopedValues, Contributions<Element>>,
        fileID: String = #fileID,
        line: Int = #line,
        as element: @escaping @Sendable (Key.Value) -> Element
    ) {
        let contribution = Contributions<Element>
            .Contribution(
                name: Key.name,
                isService: true,
                fileID: fileID,
                line: line,
                depth: depth,
                element: { values in element(try await values.service(key)) }
            )
        self[keyPath: list].append(contribution)
    }
}

/// A list entry's contributions, described without reading them: what `storedEntries` reports.
protocol DescribedContributions {
    var contributionDescriptions: [String] { get }
}

extension Contributions: DescribedContributions {
    var contributionDescriptions: [String] { contributions.map(\.description) }
}
