import OpenAPIRuntime
import Scoped

/// A response body produced inside its request's scope, which closes when the body has been
/// produced.
///
/// A body of known length up to `HeldBackBody.bufferedLimit` is produced into memory inside the scope,
/// which then closes. A longer or streamed body is produced inside the scope as the transport
/// reads it, with its last chunk held back until the scope has closed.
enum ScopeBoundBody {
    /// Binds `body` to `scope`.
    ///
    /// Called inside `scope`'s own binding (`Scope.runClosingOnFailure`, which closes it if this
    /// throws).
    static func bind(_ body: HTTPBody?, to scope: Scope) async throws -> HTTPBody? {
        guard let body else {
            try await scope.close(.success)
            return nil
        }
        let bufferedLimit = HeldBackBody<ArraySlice<UInt8>>.bufferedLimit
        if case .known(let length) = body.length, length <= bufferedLimit {
            let bytes = try await ArraySlice<UInt8>(collecting: body, upTo: bufferedLimit)
            try await scope.close(.success)
            return HTTPBody(bytes)
        }
        return HTTPBody(ScopedChunks(base: body, scope: scope), length: body.length, iterationBehavior: .single)
    }

    /// `base`'s chunks, each read inside `scope`; the last is held back until the scope closed.
    ///
    /// A transport that stops reading releases the iterator, and with it the scope, which then
    /// closes itself as `ScopeOutcome.cancelled`.
    private struct ScopedChunks: AsyncSequence, Sendable {
        typealias Element = ArraySlice<UInt8>

        let base: HTTPBody
        let scope: Scope

        func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), scope: scope) }

        struct Iterator: AsyncIteratorProtocol {
            var base: HTTPBody.AsyncIterator
            let held: HeldBackBody<ArraySlice<UInt8>>
            var finished = false

            init(base: HTTPBody.AsyncIterator, scope: Scope) {
                self.base = base
                self.held = HeldBackBody(scope: scope)
            }

            mutating func next() async throws -> ArraySlice<UInt8>? {
                guard !finished else { return nil }
                while true {
                    let chunk: ArraySlice<UInt8>?
                    do {
                        var base = self.base
                        chunk = try await held.scope.run { try await base.next(isolation: #isolation) }
                        self.base = base
                    } catch {
                        finished = true
                        await held.fail(with: error)
                        throw error
                    }
                    guard let chunk else {
                        finished = true
                        // A commit that fails ends the body with its error, without the last chunk.
                        return try await held.finish()
                    }
                    if let previous = held.hold(chunk) { return previous }
                }
            }
        }
    }
}
