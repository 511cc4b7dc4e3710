import Synchronization

extension ScopedValues {
    /// Installs, once for the process, the observer asked for the value of an entry no scope
    /// set when it is read outside every root: on a NIO event loop, a callback thread or a
    /// detached task, where no scope reaches, or from values made with ``init()``.
    ///
    /// A test library's hook, bootstrapped once as swift-log's `LoggingSystem` is: ScopedTesting
    /// installs one in every process that runs its tests, so that a live-only entry read where no
    /// test scope reaches fails the test and reads its ``ScopedKey/testValue``, never its live
    /// default. Only the observer's ``ScopeObserver/defaultValue(for:)`` is asked; returning
    /// `nil` reads the key's default. Reads in a root's scopes never reach it.
    ///
    /// A process that installs none pays one atomic load on a read outside every root of an
    /// entry no scope set, and nothing on a read in a scope.
    ///
    /// - Parameter observer: What answers those reads from now on.
    /// - Returns: Whether `observer` was installed: `false` if one was installed before, which
    ///   stays.
    @discardableResult
    public static func bootstrapReadsOutsideEveryRoot(with observer: any ScopeObserver) -> Bool {
        ReadsOutsideEveryRoot.install(observer)
    }
}

/// The one reader of ``ScopeNode/empty``, and so of every node outside every root: it asks the
/// observer ``ScopedValues/bootstrapReadsOutsideEveryRoot(with:)`` installed, if any.
struct ReadsOutsideEveryRoot: ScopeObserver {
    /// Set once, after ``installed`` holds the observer: a read that sees it `false` takes no
    /// lock.
    private static let isInstalled = Atomic<Bool>(false)
    private static let installed = Mutex<(any ScopeObserver)?>(nil)

    static func install(_ observer: any ScopeObserver) -> Bool {
        let first = installed.withLock { installed in
            guard installed == nil else { return false }
            installed = observer
            return true
        }
        if first { isInstalled.store(true, ordering: .releasing) }
        return first
    }

    var events: ScopeObserverEvents { .defaultReads }

    func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? {
        guard Self.isInstalled.load(ordering: .acquiring), let observer = Self.installed.withLock({ $0 }) else {
            return nil
        }
        return observer.defaultValue(for: key)
    }
}
