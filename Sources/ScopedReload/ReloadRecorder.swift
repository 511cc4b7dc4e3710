import Scoped
import Synchronization

/// Records what each app service of a root read while it was built, so that a reload to a new
/// root can carry over the services whose inputs did not change
/// (``ReloadableScopeRoot/reload(to:validationScope:)``).
///
/// Install it on every root a ``ReloadableScopeRoot`` serves:
///
/// ```swift
/// func makeRoot(_ configuration: AppConfiguration) -> ScopeRoot {
///     ScopeRoot(services: [SQLiteDatabaseKey.self], observers: [ReloadRecorder()]) { values in
///         values.sqliteConfiguration = configuration.database
///     }
/// }
/// ```
///
/// It takes only `ScopeObserverEvents.appReads`: what app services read, once per root,
/// never anything per request. A root created without it still reloads, but rebuilds every app
/// service, since what they read is not known.
public struct ReloadRecorder: ScopeObserver {
    /// A recorder to install on a root.
    public init() {}

    /// App services' reads only.
    public var events: ScopeObserverEvents { .appReads }

    /// The recorder of one root, which keeps what that root's app services read.
    public func forRoot(registering services: [any ScopedServiceKey.Type]) -> (any ScopeObserver)? {
        RootReloadRecorder()
    }
}

/// What each app service of one root read while it was built: the entries, objects and given
/// services with their values, and the services.
final class RootReloadRecorder: ScopeObserver {
    struct Record {
        var inputs: [ScopeInput]?
        var services: [any ScopedServiceKey.Type] = []
    }

    private let records = Mutex<[ObjectIdentifier: Record]>([:])

    var events: ScopeObserverEvents { .appReads }

    func serviceRead(_ service: any ScopedServiceKey.Type, by reader: any ScopedServiceKey.Type, refusal: ScopedError?)
    {
        guard refusal == nil else { return }
        records.withLock { records in
            let id = ObjectIdentifier(service)
            var record = records[ObjectIdentifier(reader)] ?? Record()
            guard !record.services.contains(where: { ObjectIdentifier($0) == id }) else { return }
            record.services.append(service)
            records[ObjectIdentifier(reader)] = record
        }
    }

    func appServiceBuilt(_ service: any ScopedServiceKey.Type, in duration: Duration?, reading inputs: [ScopeInput]) {
        records.withLock { $0[ObjectIdentifier(service), default: Record()].inputs = inputs }
    }

    /// What the app service `key` read while it was built; `nil` when it was not built here.
    func reads(of key: any ScopedServiceKey.Type) -> (inputs: [ScopeInput], services: [any ScopedServiceKey.Type])? {
        records.withLock { records in
            records[ObjectIdentifier(key)].flatMap { record in record.inputs.map { ($0, record.services) } }
        }
    }
}
