public import Scoped
public import Testing

/// A Swift Testing trait that runs a test, or every test of a suite, in a fresh test scope
/// with entries overridden.
///
/// ```swift
/// @Suite(.scoped { $0.movieRepository = InMemoryMovieRepository() })
/// struct MovieRepositoryTests {
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

    init(update: @escaping @Sendable (inout ScopedValues) throws -> Void) {
        self.update = update
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
        if ScopedValues.current.isTestScope {
            try await withScopedValues(update) { try await function() }
        } else {
            try await withTestScope(update) { try await function() }
        }
    }
}

extension Trait where Self == ScopedTrait {
    /// Runs the test, or each test of the suite, in a fresh test scope changed by `update`.
    public static func scoped(_ update: @escaping @Sendable (inout ScopedValues) throws -> Void = { _ in }) -> Self {
        ScopedTrait(update: update)
    }
}
