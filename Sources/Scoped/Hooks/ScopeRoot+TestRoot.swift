/// The hook test support is written on, beside ``ScopeObserver``: ScopedTesting's
/// `withTestScope` and `.scoped` trait use nothing else of the core that an application could
/// not.
extension ScopeRoot {
    /// Creates a test's own root: the root ScopedTesting's `withTestScope` and `.scoped` trait run
    /// a test on.
    ///
    /// A test root, and every root created in its scopes (an application the test builds, which
    /// serves the test's requests), differs from an application's root in three ways:
    /// ``ScopedValues/isTestScope`` is true in their scopes (a database layer uses the database
    /// the test lent); ``ScopedValues/isOnTestsOwnRoot`` is true in the test root's own; and a
    /// tenant not open yet that a test root opens from one of its own scopes (a suite's, with
    /// ``withScope(tenant:_:operation:)``) starts from that scope's values rather than the
    /// root's: a test's tenant keeps what its suite set, its mocks and its database.
    ///
    /// What a test library checks, it checks with a ``ScopeObserver`` that takes
    /// ``ScopeObserverEvents/nestedRoots``, so that the roots made in the test report to it too.
    /// ScopedTesting's answers the reads of live-only entries the test did not override with
    /// their ``ScopedKey/testValue`` and records the failure, and tracks the scopes left open
    /// (``ScopeObserver/scopeOpened(_:handedOffAt:)``). The first of those, for a test library
    /// of your own:
    ///
    /// ```swift
    /// struct LiveOnlyCheck: ScopeObserver {
    ///     let record: @Sendable (String) -> Void
    ///     var events: ScopeObserverEvents { [.defaultReads, .nestedRoots] }
    ///
    ///     func defaultValue<Key: ScopedKey>(for key: Key.Type) -> Key.Value? {
    ///         guard let testValue = Key.testValue else { return nil }
    ///         record("\(Key.name) read its live default")
    ///         return testValue
    ///     }
    /// }
    /// ```
    ///
    /// ```swift
    /// let root = ScopeRoot.testRoot(observers: [LiveOnlyCheck { Issue.record("\($0)") }])
    /// try await root.withScope { try await test() }
    /// await root.shutdown()
    /// ```
    ///
    /// - Parameter observers: What the test root reports to and opens its tenants with, as
    ///   ``init(startingFrom:services:requirements:onCloseError:closeTimeout:observers:configure:)``
    ///   takes them; none by default.
    /// - Returns: A root with nothing set, to open the test's scope on.
    public static func testRoot(observers: [any ScopeObserver] = []) -> ScopeRoot {
        let (observers, tenantProvider) = RootObservers.forRoot(observers, registering: [])
        return ScopeRoot(
            registry: ScopeRegistry(isTestRoot: true, observers: observers),
            tenantProvider: tenantProvider
        ) { _ in }
    }
}
