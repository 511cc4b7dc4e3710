/// The hooks test support is written on: ScopedTesting's `withTestScope` and `.scoped` trait
/// use nothing else of the core that an application could not.
extension ScopeRoot {
    /// Creates a test's own root: the root ScopedTesting's `withTestScope` and `.scoped` trait run
    /// a test on.
    ///
    /// A test root, and every root created in its scopes (an application the test builds, which
    /// serves the test's requests), differs from an application's root in three ways:
    /// - a read of a live-only entry (a key with a `testValue`) that nothing set returns the
    ///   `testValue`, and `onLiveDefaultRead` is called with the entry's name, for the test to
    ///   fail with it;
    /// - ``ScopedValues/isTestScope`` is true in their scopes, and
    ///   ``ScopedValues/isOnTestsOwnRoot`` in the test root's own;
    /// - ``workStillOpen(after:)`` names the scopes still open on any of them.
    ///
    /// And a tenant not open yet that a test root opens from one of its own scopes (a suite's,
    /// with ``withScope(tenant:_:operation:)``) starts from that scope's values rather than the
    /// root's: a test's tenant keeps what its suite set, its mocks and its database.
    ///
    /// ```swift
    /// let root = ScopeRoot.testRoot { entry in Issue.record("\(entry) read its live default") }
    /// try await root.withScope { try await test() }
    /// for work in await root.workStillOpen(after: grace) { Issue.record("left running: \(work)") }
    /// await root.shutdown()
    /// ```
    ///
    /// - Parameters:
    ///   - observers: What the test root reports to and opens its tenants with, as
    ///     ``init(startingFrom:services:requirements:onCloseError:closeTimeout:observers:configure:)``
    ///     takes them; none by default.
    ///   - onLiveDefaultRead: Told the name of each live-only entry read without an override, on
    ///     any of the roots.
    /// - Returns: A root with nothing set, to open the test's scope on.
    public static func testRoot(
        observers: [any ScopeObserver] = [],
        onLiveDefaultRead: @escaping @Sendable (_ entry: String) -> Void
    ) -> ScopeRoot {
        let observer = DefaultReadObserver(onLiveDefaultRead: onLiveDefaultRead, openWork: OpenWorkTracker())
        let (observers, tenantProvider) = RootObservers.forRoot(observers, registering: [])
        return ScopeRoot(
            registry: ScopeRegistry(observer: observer, isTestRoot: true, observers: observers),
            tenantProvider: tenantProvider
        ) { _ in }
    }

    /// The scopes still open on this test root and on the roots created in its scopes, each
    /// described by the work handed off in it or the entries it set; empty when every scope
    /// closed within `grace`, and on a root that is not a test's.
    ///
    /// Only time in which the process ran counts toward `grace`, so that work which could not
    /// run (every thread busy with other tests) is not reported for it.
    ///
    /// - Parameter grace: How long to wait for the scopes to close.
    /// - Returns: A description of each scope still open, sorted.
    public func workStillOpen(after grace: Duration) async -> [String] {
        guard let openWork = context.registry.observer?.openWork else { return [] }
        return await openWork.stillOpen(after: grace)
    }
}
