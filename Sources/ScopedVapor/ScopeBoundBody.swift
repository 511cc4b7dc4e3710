import NIOCore
import Scoped
import Synchronization
import Vapor

/// A Vapor response body bound to its request's scope, which closes when the body has been
/// written.
///
/// Vapor keeps a streamed body's writer private: nothing outside Vapor can write a finished
/// `Response.Body` into another writer. So a stream runs in its request's scope only when it is
/// made for it, with `Response.Body(scopedAsyncStream:count:)`, which takes the scope over from
/// the middleware. Every other body is settled when the handler returns: one in memory as it
/// is, and a stream of known length up to `HeldBackBody.bufferedLimit` produced into memory inside the
/// scope, before the scope closes; a longer plain stream is written after its scope closed.
enum ScopeBoundBody {
    /// Settles `body` in `scope`, which then closes, unless a scoped stream took the scope over.
    ///
    /// Called inside `scope`'s own binding (`Scope.runClosingOnFailure`, which closes it if this
    /// throws).
    static func settle(_ body: Response.Body, in scope: Scope, handOver: ScopeHandOver, on eventLoop: any EventLoop)
        async throws -> Response.Body
    {
        if handOver.isTaken { return body }
        var body = body
        if body.buffer == nil, (1...HeldBackBody<ByteBuffer>.bufferedLimit).contains(body.count) {
            // A plain stream, short enough to produce now: its writes run in this scope.
            body = Response.Body(buffer: try await body.collect(on: eventLoop).get() ?? ByteBuffer())
        }
        try await scope.close(.success)
        return body
    }

    /// A body that runs `stream` inside `scope`, which then closes with the outcome of the
    /// write; its last buffer is held back until the scope has closed.
    static func stream(
        _ stream: @escaping @Sendable (any AsyncBodyStreamWriter) async throws -> Void,
        count: Int?,
        closing scope: Scope
    ) -> Response.Body {
        let write: @Sendable (any AsyncBodyStreamWriter) async throws -> Void = { writer in
            let holding = HoldingWriter(base: writer, held: HeldBackBody(scope: scope))
            do {
                try await scope.run { try await stream(holding) }
            } catch {
                await holding.fail(with: error)
                throw error
            }
            // A stream that returned without writing `.end` ends here.
            try await holding.write(.end)
        }
        guard let count else { return Response.Body(asyncStream: write) }
        return Response.Body(asyncStream: write, count: count)
    }

    /// The writer a scoped stream writes to: forwards every buffer but the last, and on `.end`
    /// closes the scope before forwarding the last one.
    private final class HoldingWriter: AsyncBodyStreamWriter {
        private let base: any AsyncBodyStreamWriter
        private let held: HeldBackBody<ByteBuffer>
        /// Whether `.end` or `.error` reached the connection's writer.
        private let ended = Atomic(false)

        init(base: any AsyncBodyStreamWriter, held: HeldBackBody<ByteBuffer>) {
            self.base = base
            self.held = held
        }

        func write(_ result: BodyStreamResult) async throws {
            switch result {
            case .buffer(let buffer):
                if let previous = held.hold(buffer) { try await forward(.buffer(previous)) }
            case .end:
                guard !ended.load(ordering: .acquiring) else { return }
                let last: ByteBuffer?
                do {
                    last = try await held.finish()
                } catch {
                    // The commit failed: the last buffer never goes out, and the client sees a
                    // response cut short rather than a complete one.
                    await endIfOpen(with: error)
                    throw error
                }
                if let last { try await forward(.buffer(last)) }
                try await forward(.end)
            case .error(let error):
                await fail(with: error)
            }
        }

        /// Closes the scope for a stream that failed with `error`, and ends the response with it.
        func fail(with error: any Error) async {
            await held.fail(with: error)
            await endIfOpen(with: error)
        }

        /// Ends the response with `error` unless it has ended: Vapor closes the connection.
        private func endIfOpen(with error: any Error) async {
            guard !ended.load(ordering: .acquiring) else { return }
            try? await forward(.error(error))
        }

        private func forward(_ result: BodyStreamResult) async throws {
            switch result {
            case .end, .error: ended.store(true, ordering: .releasing)
            case .buffer: break
            }
            try await held.sending { try await base.write(result) }
        }
    }
}

/// The request scope a handler runs in, which a scoped stream takes over: the middleware then
/// leaves the scope's close to the body.
final class ScopeHandOver: Sendable {
    /// The request scope being handled in this task.
    @TaskLocal static var current: ScopeHandOver?

    let scope: Scope
    private let taken = Atomic(false)

    init(scope: Scope) { self.scope = scope }

    /// Whether a body took the scope over.
    var isTaken: Bool { taken.load(ordering: .acquiring) }

    /// Takes the scope over; `nil` when a body already took it.
    func take() -> Scope? {
        taken.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged ? scope : nil
    }
}
