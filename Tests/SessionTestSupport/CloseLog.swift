public import Scoped
import Synchronization

/// Records how a request's resource was closed: `success`, `cancelled` or `failure`.
public final class CloseLog: Sendable {
    private let outcomes = Mutex<[String]>([])

    /// Creates an empty log.
    public init() {}

    /// Records how the resource was closed.
    public func record(_ outcome: ScopeOutcome) {
        outcomes.withLock {
            $0.append(outcome.isSuccess ? "success" : "\(outcome)".hasPrefix("cancelled") ? "cancelled" : "failure")
        }
    }

    /// Every outcome recorded, oldest first.
    public var all: [String] { outcomes.withLock { $0 } }
}

/// What a resource's close throws when its scope asked it to fail: a commit that failed.
public struct CommitFailed: Error {}

extension ScopedValues {
    /// Where ``LoggedResourceKey``'s close records its outcome.
    @Entry public var closeLog: CloseLog? = nil
    /// Whether ``LoggedResourceKey``'s close throws ``CommitFailed``, as a commit that fails.
    @Entry public var failsToCommit: Bool = false
}

/// A request resource whose close records the outcome it was told in the scope's
/// ``CloseLog``, then throws when the scope set `failsToCommit`.
public enum LoggedResourceKey: ScopedServiceKey {
    /// One resource per scope.
    public static let lifetime = ScopedLifetime.scope

    /// The scope's log.
    public static func makeValue() async throws -> CloseLog { ScopedValues.current.closeLog! }

    /// Records `outcome`, then fails when the scope asked it to.
    public static func close(_ log: CloseLog, outcome: ScopeOutcome) async throws {
        log.record(outcome)
        if ScopedValues.current.failsToCommit { throw CommitFailed() }
    }
}
