/// The record of who changed which movie, and when: each change with the ID of the request
/// that made it.
///
/// The catalog writes it once the change has committed, with `handOff(.afterCommit, timeout:)`,
/// in a transaction of its own: a client does not wait for the record, a record that fails does
/// not fail the change, and a change that rolls back is never recorded. It lives in the database the movies live in.
package protocol MovieHistory: Sendable {
    /// Records `action` on a movie, naming the current request.
    func record(_ action: MovieChange.Action, movieID: Int) async throws
    /// Deletes the changes recorded more than `age` ago; returns how many.
    func prune(olderThan age: Duration) async throws -> Int
    /// A movie's changes, oldest first; empty for a movie never changed through the API.
    func changes(movieID: Int) async throws -> [MovieChange]
}
