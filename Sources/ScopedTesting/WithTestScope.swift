public import Scoped
import ScopedTenants

/// Runs `operation` in a fresh test scope: a new application root built from defaults and
/// `update`, and a scope opened on it, closed and shut down when the operation ends.
///
/// Nothing carries over from one test scope to the next: app services are built again for
/// each, and live-only entries (those with a `testValue`) that the test did not override
/// record a failure naming the entry instead of building their live default. Use it from
/// XCTest, or anywhere the `.scoped` trait does not reach:
///
/// ```swift
/// func testFindsAMovie() async throws {
///     try await withTestScope({ $0.movieRepository = InMemoryMovieRepository.fixture() }) {
///         let movie = try await ScopedValues.current.movieRepository.movie(id: 1)
///         XCTAssertEqual(movie?.title, "Toy Story")
///     }
/// }
/// ```
///
/// The test fails, naming what it left, when work it started still runs five seconds after it
/// ended: a scope it opened and did not close (on any root made in the test, such as a request
/// of an application under test), or work it handed off with `handOff`. Such work would
/// otherwise go on into the next test.
///
/// > Note: Plain entries' defaults are `static let`s, shared by the whole process and so by
/// > every test; keep them immutable values. Mutable state belongs in an app service, which
/// > each test scope builds afresh.
///
/// - Parameters:
///   - tenant: the tenant the test runs as: its scope is a scope of that tenant, whose
///     `ScopedLifetime.tenant` services the test's root builds for it; `nil` (the default) for
///     none.
///   - update: changes the test scope's values.
///   - operation: the test.
/// - Returns: what `operation` returns.
/// - Throws: what `operation` throws, or what opening the scope throws.
nonisolated(nonsending) public func withTestScope<R>(
    tenant: TenantID? = nil,
    _ update: (inout ScopedValues) throws -> Void = { _ in },
    operation: () async throws -> R
) async throws -> R {
    ReadsOutsideTestScopes.installed
    let checks = TestChecks(onLiveDefaultRead: liveDefaultRecorder())
    let root = ScopeRoot.testRoot(observers: [checks, Tenancy()])
    let result: Result<R, any Error>
    do {
        result = .success(
            try await RunningTestScopes.running(checks) {
                try await TestRoot.$current.withValue(root) {
                    try await root.withScope(tenant: tenant, update, operation: operation)
                }
            }
        )
    } catch {
        result = .failure(error)
    }
    checks.recordTheFailuresKeptForTheEnd()
    let record = leftRunningRecorder()
    for work in await checks.stillOpen(after: .seconds(5)) { record(work) }
    await root.shutdown()
    return try result.get()
}

/// The root of the test scope the calling task runs in, for a test of a suite to open its own
/// tenant's scope on its suite's root.
enum TestRoot {
    @TaskLocal static var current: ScopeRoot?
}
