/// Waits until `condition` holds, checking every few milliseconds, for at most `timeout`.
///
/// For state another task changes after the call under test returned (a scope closed by a
/// response's writer, a connection a server notices is gone, a row written after a response).
/// The condition may suspend, to ask a server or a database. The timeout bounds a failure; it
/// is not a measurement.
///
/// - Returns: whether the condition held before the timeout.
/// - Throws: what `condition` throws.
public func eventually(
    within timeout: Duration = .seconds(5),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while try await !condition() {
        guard clock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
