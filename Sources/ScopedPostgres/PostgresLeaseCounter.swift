import Synchronization

/// How many connections a database's sessions hold right now, for its statistics.
final class PostgresLeaseCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// The connections held now.
    var count: Int { value.load(ordering: .relaxed) }

    /// Adds `delta` (1 when a lease starts, -1 when it ends).
    func add(_ delta: Int) { value.add(delta, ordering: .relaxed) }
}
