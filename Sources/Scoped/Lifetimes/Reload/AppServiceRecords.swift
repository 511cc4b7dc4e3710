import Synchronization

/// What each app service of a root read while it was built.
///
/// The entries and objects (its ``ServiceInputs``) and the services: a reload carries a service
/// over only when all of them are unchanged (``ScopeRoot/carryOver(from:)``).
///
/// Recorded once per app service, never for a request: only an app service's construction
/// records its reads here.
final class AppServiceRecords: Sendable {
    private struct Record {
        var inputs: ServiceInputs?
        var services: [any ScopedServiceKey.Type] = []
    }

    private let records = Mutex<[ObjectIdentifier: Record]>([:])

    /// Records that the construction of the app service `reader` read the service `service`.
    func recordRead(by reader: any ScopedServiceKey.Type, of service: any ScopedServiceKey.Type) {
        records.withLock { records in
            let id = ObjectIdentifier(service)
            var record = records[ObjectIdentifier(reader)] ?? Record()
            guard !record.services.contains(where: { ObjectIdentifier($0) == id }) else { return }
            record.services.append(service)
            records[ObjectIdentifier(reader)] = record
        }
    }

    /// Records what the app service `key` read, once it is built.
    func built(_ key: any ScopedServiceKey.Type, inputs: ServiceInputs) {
        records.withLock { $0[ObjectIdentifier(key), default: Record()].inputs = inputs }
    }

    /// What the app service `key` read while it was built; `nil` when it was not built here.
    func inputs(of key: any ScopedServiceKey.Type) -> ServiceInputs? {
        records.withLock { $0[ObjectIdentifier(key)]?.inputs }
    }

    /// The services the app service `key` read while it was built, in the order first read.
    func services(readBy key: any ScopedServiceKey.Type) -> [any ScopedServiceKey.Type] {
        records.withLock { $0[ObjectIdentifier(key)]?.services ?? [] }
    }

    /// Takes over what `previous` recorded of `key`, carried over from its root.
    func carriedOver(_ key: any ScopedServiceKey.Type, from previous: AppServiceRecords) {
        let record = previous.records.withLock { $0[ObjectIdentifier(key)] }
        records.withLock { $0[ObjectIdentifier(key)] = record }
    }
}
