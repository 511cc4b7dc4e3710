import Synchronization

/// One value an app service's construction read from its root: an entry, an object, or a
/// service the root was given with `set(_:to:)`.
///
/// Told to observers that take ``ScopeObserverEvents/appReads`` with
/// ``ScopeObserver/appServiceBuilt(_:in:reading:)``, so that they can read the same input from
/// another root and compare: how ScopedReload decides whether a service can be carried over.
public struct ScopeInput: Sendable {
    /// The entry's name (`sqliteConfiguration`), the object's type, or the service's entry name.
    public let name: String
    /// The value read.
    public let value: any Sendable
    /// Whether it is a service the root was given with `set(_:to:)`: its read is also told as
    /// a read of that service.
    public let isService: Bool
    let id: ObjectIdentifier
    let reader: any InputReader

    /// What the construction would read for this input from `root`: the entry's value there,
    /// its object of that type or the service it was given (`nil` when it has none).
    public func value(in root: ScopeRoot) -> any Sendable { reader.read(root.values) }
}

/// The inputs one app service's construction reads, in the order first read, each once.
final class ServiceInputs: Sendable {
    private let inputs = Mutex<[ScopeInput]>([])

    /// The inputs, in the order first read.
    var all: [ScopeInput] { inputs.withLock { $0 } }

    func record(_ input: ScopeInput) {
        inputs.withLock { inputs in
            if !inputs.contains(where: { $0.id == input.id }) { inputs.append(input) }
        }
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
        inputs.record(.init(name: name, value: value, isService: isService, id: id, reader: reader))
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

/// Where a root records what an app service reads while it is built.
extension ServiceOwner {
    /// An empty node of this root, derived from `root` (the root's own node), on which an app
    /// service is built: every read falls through to an observer that answers it from the
    /// root's values and records it in `inputs`.
    func recordingNode(into inputs: ServiceInputs, over root: ScopeNodeBuffer) -> ScopeNode {
        let observer = DefaultReadObserver(recording: InputRecording(root: root, into: inputs))
        return ScopeNode(ScopeNodeBuffer.make(capacity: 0, depth: 0, scope: self, observer: observer, up: root))
    }
}

/// A root's built app services as a whole: listed for the root that replaces it, adopted from
/// the root it replaces, and watched by what runs beside them.
///
/// Each step changes the root's services and its ``RootContext`` together, the root's lock
/// taken inside the services' lock.
extension ServiceOwner {
    /// The app services this root built or adopted and still holds, oldest first.
    func builtServices() -> [ScopeRoot.BuiltService] {
        state.withLock { state in
            var built: [(order: Int, service: ScopeRoot.BuiltService)] = []
            for entry in state.entries {
                guard case .built(let box, let key, let order) = entry.slot else { continue }
                built.append((order, ScopeRoot.BuiltService(key: key, id: entry.id, box: box)))
            }
            return built.sorted { $0.order < $1.order }.map(\.service)
        }
    }

    /// Holds `service`, built by the root this one replaces, as built here, without closing it
    /// until ``RootContext/closeCarriedOver(from:)``.
    ///
    /// - Returns: `false` when this is not a root, or it already built or is building the
    ///   service, or has closed: then it is not adopted.
    func adopt(_ service: ScopeRoot.BuiltService) -> Bool {
        guard let root = rootContext else { return false }
        let adopted = state.withLock { state in
            guard !isClosed.load(ordering: .relaxed), state.index(of: service.id) == nil else { return false }
            state.entries.append(
                Entry(id: service.id, slot: .built(service.box, key: service.key, order: state.builtCount))
            )
            state.builtCount += 1
            root.state.withLock { root in
                root.notClosed.insert(service.id)
                root.carriedOver.insert(service.id)
            }
            return true
        }
        if adopted { root.publish(service.box, for: service.id) }
        return adopted
    }

    /// Calls `watcher` with each service this root builds from now on, as it is built.
    ///
    /// Returns the services it has built so far, oldest first: together, every service, once.
    /// Services carried over from a root this one replaced are not among them: they were built,
    /// and are watched, there. `closed` is told each service this root closes, once it has.
    ///
    /// See ``ScopeRoot/watchAppServices(built:closed:)``. A scope that is not a root has no app
    /// services: it returns none and calls neither.
    func watchBuiltServices(
        _ watcher: @escaping @Sendable (any Sendable) -> Void,
        closed: (@Sendable (any Sendable) -> Void)? = nil
    ) -> [any Sendable] {
        guard let root = rootContext else { return [] }
        return state.withLock { state in
            let carriedOver = root.state.withLock { root in
                root.watchers.append(watcher)
                if let closed { root.closeWatchers.append(closed) }
                return root.carriedOver
            }
            var built: [(order: Int, value: any Sendable)] = []
            for entry in state.entries where !carriedOver.contains(entry.id) {
                guard case .built(let box, let key, let order) = entry.slot else { continue }
                built.append((order, key.value(erased: box)))
            }
            return built.sorted { $0.order < $1.order }.map(\.value)
        }
    }
}
