public import Scoped
public import ScopedDatabase
public import Testing

/// A Swift Testing trait that runs a test, or every test of a suite, in a fresh test scope
/// with entries overridden.
///
/// ```swift
/// @Suite(.scoped { $0.movieRepository = InMemoryMovieRepository() })
/// struct CatalogTests {
///     @Test(.scoped { $0.movieRepository = InMemoryMovieRepository.fixture() })
///     func findsAMovie() async throws { … }
/// }
/// ```
///
/// A suite's trait applies to each of its tests; a test's own trait is applied inside it, so
/// where both set an entry, the test wins. Each test runs in its own scope, so tests running in
/// parallel never see each other's overrides.
public struct ScopedTrait: TestTrait, SuiteTrait, TestScoping {
    private let update: @Sendable (inout ScopedValues) throws -> Void
    private let database: (any TestDatabase)?
    private let tenant: TenantID?

    init(
        update: @escaping @Sendable (inout ScopedValues) throws -> Void,
        database: (any TestDatabase)? = nil,
        tenant: TenantID? = nil
    ) {
        self.update = update
        self.database = database
        self.tenant = tenant
        // Made when tests are discovered, before any runs: from then on, a live-only entry read
        // outside every scope fails the run.
        ReadsOutsideTestScopes.installed
    }

    /// Applies to every test in a suite, not once to the suite.
    public var isRecursive: Bool { true }

    /// Runs each test case in a test scope changed by this trait's update.
    @concurrent
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @concurrent @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else {
            try await function()
            return
        }
        guard let database else {
            try await run(function, update: update)
            return
        }
        try await database.withIsolation(for: test.name) { isolate in
            try await run(function) { values in
                isolate(&values)
                try update(&values)
            }
        }
    }

    private func run(
        _ function: @concurrent @Sendable () async throws -> Void,
        update: (inout ScopedValues) throws -> Void
    ) async throws {
        let current = ScopedValues.current
        switch (current.isTestScope, tenant) {
        case (true, let tenant?) where current.tenant != tenant:
            // A test's tenant inside a suite's scope: a scope of that tenant on the suite's test
            // root, whose tenant starts from the suite's values (`ScopeRoot.testRoot`).
            guard let root = TestRoot.current else {
                return try await withTestScope(tenant: tenant, update) { try await function() }
            }
            try await root.withScope(tenant: tenant, update) { try await function() }
        case (true, _):
            try await withScopedValues(update) { try await function() }
        case (false, _):
            try await withTestScope(tenant: tenant, update) { try await function() }
        }
    }
}

extension Trait where Self == ScopedTrait {
    /// Runs the test, or each test of the suite, in a fresh test scope changed by `update`.
    public static func scoped(_ update: @escaping @Sendable (inout ScopedValues) throws -> Void = { _ in }) -> Self {
        ScopedTrait(update: update)
    }

    /// Runs the test, or each test of the suite, as `tenant`: in a fresh test scope of that
    /// tenant, changed by `update`.
    ///
    /// ```swift
    /// @Test(.scoped(tenant: TenantID("acme")!))
    /// func seesOnlyItsOwnCatalog() async throws { … }
    /// ```
    ///
    /// The test's `ScopedLifetime.tenant` services are the tenant's, built for the test and
    /// closed when it ends. Inside a suite's `.scoped` trait, the test's scope is a scope of
    /// `tenant` on the suite's test root. With a `.scoped(database:)` database, each tenant has
    /// a database of its own.
    public static func scoped(
        tenant: TenantID,
        _ update: @escaping @Sendable (inout ScopedValues) throws -> Void = { _ in }
    ) -> Self {
        ScopedTrait(update: update, tenant: tenant)
    }

    /// Runs the test, or each test of the suite, in a fresh test scope changed by `update`,
    /// with every database session it opens on a real database of its own.
    ///
    /// ```swift
    /// @Test(.scoped(database: .sqlite(migrations: SQLiteMovieRepository.migrations)))
    /// func ratingAMovieStoresIt() async throws { … }
    ///
    /// @Test(.scoped(database: .postgres(configuration)))
    /// func ratingAMovieStoresItOnPostgres() async throws { … }
    /// ```
    ///
    /// Request scopes that the code under test opens (a router under Hummingbird's test
    /// client, on a root built inside the test) use it too. What the test wrote is gone when it
    /// ends, so tests run in parallel on one database and clean up nothing.
    ///
    /// - Parameters:
    ///   - database: the database, from ScopedSQLite's `.sqlite(migrations:)`, ScopedPostgres's
    ///     `.postgres(_:)` or ScopedFluent's `.fluent` (the test application's Fluent databases).
    ///   - update: changes the test scope's values, after the database is set.
    /// - Returns: the trait.
    public static func scoped(
        database: some TestDatabase,
        _ update: @escaping @Sendable (inout ScopedValues) throws -> Void = { _ in }
    ) -> Self {
        ScopedTrait(update: update, database: database)
    }
}
