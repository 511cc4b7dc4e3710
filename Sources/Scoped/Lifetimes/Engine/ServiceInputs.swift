import Synchronization

/// What an app service read while it was built: each entry, object or provided service, with
/// the value it held then.
///
/// A reload carries the service over to the new root when every input holds an equal value
/// there (``ScopeRoot/carryOver(from:)``). Recorded once per app service, never for a request.
package final class ServiceInputs: Sendable {
    /// One value the construction read.
    package struct Input: Sendable {
        /// The entry's name (`sqliteConfiguration`), or the object's type.
        package let name: String
        let id: ObjectIdentifier
        /// The value read.
        let value: any Sendable
        /// Reads the same entry from another root's values.
        let reader: any InputReader
        /// Whether it is a service the root might provide with `set(_:to:)`: compared, but not
        /// listed among the inputs, since the service's read is a dependency.
        var isService = false

        func read(_ values: ScopedValues) -> any Sendable { reader.read(values) }
    }

    private let inputs = Mutex<[Input]>([])

    package init() {}

    /// The inputs, in the order first read.
    package var all: [Input] { inputs.withLock { $0 } }

    func record(_ input: Input) {
        inputs.withLock { inputs in
            if !inputs.contains(where: { $0.id == input.id }) { inputs.append(input) }
        }
    }

    /// The first input whose value in `values` differs from the one read, with what differs:
    /// `sqliteConfiguration.readers`, or the entry's name when no field can be named.
    package func firstChange(in values: ScopedValues) -> String? {
        for input in all {
            let now = input.read(values)
            if !ValueComparison.same(input.value, now) {
                return ValueComparison.changedField(input.value, now).map { "\(input.name).\($0)" } ?? input.name
            }
        }
        return nil
    }
}

/// Reads of the root's values made while one of its app services is built: each is recorded
/// in the service's ``ServiceInputs`` and answered from the root.
///
/// The construction runs on an empty node whose observer holds this recording, so that every
/// read falls through to it: reads outside constructions pay nothing for it.
final class InputRecording: Sendable {
    /// The root's values, held only while the construction runs.
    private let root: ScopedValues
    let inputs: ServiceInputs

    init(root: ScopeNodeBuffer, into inputs: ServiceInputs) {
        self.root = ScopedValues(node: ScopeNode(root))
        self.inputs = inputs
    }

    /// The root's value for `key`, recorded.
    func read<K: ScopedKey>(_ key: K.Type) -> K.Value {
        record(EntryReader<K>(), name: ScopedValues.entryName(of: key), id: ObjectIdentifier(key))
    }

    /// The root's object of type `T`, recorded.
    func object<T: Sendable>(_ type: T.Type) -> T? {
        record(ObjectReader<T>(), name: String(reflecting: type), id: ObjectIdentifier(type))
    }

    /// The service the root was given for `key` with `set(_:to:)`, if any, recorded.
    func providedService<K: ScopedServiceKey>(_ key: K.Type) -> K.Value? {
        record(ProvidedServiceReader<K>(), name: K.name, id: ObjectIdentifier(key), isService: true)
    }

    /// Reads the root's value with `reader`, the way the new root's is read when a reload
    /// compares them, and records it.
    private func record<Reader: InputReader>(
        _ reader: Reader,
        name: String,
        id: ObjectIdentifier,
        isService: Bool = false
    ) -> Reader.Value {
        let value = reader.read(root)
        inputs.record(.init(name: name, id: id, value: value, reader: reader, isService: isService))
        return value
    }
}

/// Reads one input from a root's values: an entry, an object, or a provided service.
protocol InputReader: Sendable {
    associatedtype Value: Sendable
    func read(_ values: ScopedValues) -> Value
}

private struct EntryReader<K: ScopedKey>: InputReader {
    func read(_ values: ScopedValues) -> K.Value { values[K.self] }
}

private struct ObjectReader<T: Sendable>: InputReader {
    func read(_ values: ScopedValues) -> T? { values.object(T.self) }
}

private struct ProvidedServiceReader<K: ScopedServiceKey>: InputReader {
    func read(_ values: ScopedValues) -> K.Value? {
        values.node.storage(for: ObjectIdentifier(K.self)).map { ScopeNodeBuffer.load($0, as: K.Value.self) }
    }
}

/// Whether two values read for the same entry are the same: equal when their type is
/// `Equatable`, the same instance when it is a class, else never (a closure, a struct that
/// cannot be compared), so that a service reading one is rebuilt rather than kept stale.
enum ValueComparison {
    static func same(_ old: any Sendable, _ new: any Sendable) -> Bool {
        if let old = old as? any Equatable { return old.isEqual(to: new) }
        if type(of: old) is AnyClass, type(of: new) is AnyClass {
            return (old as AnyObject) === (new as AnyObject)
        }
        return isNil(old) && isNil(new)
    }

    /// The mirror of the value an optional wraps, or `mirror` itself.
    private static func unwrapped(_ mirror: Mirror) -> Mirror {
        guard mirror.displayStyle == .optional, let wrapped = mirror.children.first else { return mirror }
        return Mirror(reflecting: wrapped.value)
    }

    private static func isNil(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    /// The label of the first stored property of two values of one type that differs, when
    /// the type has labelled properties.
    static func changedField(_ old: any Sendable, _ new: any Sendable) -> String? {
        let old = unwrapped(Mirror(reflecting: old))
        let new = unwrapped(Mirror(reflecting: new))
        guard old.subjectType == new.subjectType, old.children.count == new.children.count else { return nil }
        for (before, after) in zip(old.children, new.children) {
            guard let label = before.label else { return nil }
            if String(reflecting: before.value) != String(reflecting: after.value) { return label }
        }
        return nil
    }
}

extension Equatable {
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}

/// Where a root records what an app service reads while it is built.
extension ScopeContext {
    /// An empty node of this root on which an app service is built: every read falls through
    /// to an observer that answers it from the root's values and records it in `inputs`.
    func recordingNode(into inputs: ServiceInputs) -> ScopeNode? {
        guard let root = state.withLock({ $0.node }) else { return nil }
        let observer = DefaultReadObserver(recording: InputRecording(root: root, into: inputs))
        return ScopeNode(ScopeNodeBuffer.make(capacity: 0, depth: 0, scope: self, observer: observer))
    }
}
