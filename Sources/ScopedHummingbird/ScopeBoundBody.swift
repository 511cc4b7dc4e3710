import HTTPTypes
import Hummingbird
import NIOCore
import Scoped
import Synchronization

/// A response body written inside its request's scope, which closes when the body has been
/// written.
///
/// A body of known length up to `HeldBackBody.bufferedLimit` (a JSON response) is written into memory
/// inside the scope before its head is sent; the scope then closes, and the response goes out
/// in one write, after the commit, with a commit failure reported as the request's error.
/// Longer bodies, and bodies of unknown length, stream inside the scope, with their last buffer
/// held back until the scope has closed: a client that received the whole response received it
/// after the request's transaction committed, and a commit that fails cuts the response short.
enum ScopeBoundBody {
    /// `body` bound to `scope`: produced now and the scope closed, when it is short and of
    /// known length; else wrapped to stream inside the scope, which closes after it.
    ///
    /// Called inside `scope`'s own binding (`Scope.runClosingOnFailure`, which closes it if
    /// this throws), so that producing the body and closing the scope bind nothing more.
    static func bind(_ body: ResponseBody, to scope: Scope) async throws -> ResponseBody {
        guard let length = body.contentLength, length <= HeldBackBody<ByteBuffer>.bufferedLimit else {
            return wrap(body, closing: scope)
        }
        let collected = Collected()
        try await body.write(Collector(collected: collected))
        try await scope.close(.success)
        return collected.buffer.withLock { $0 }.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody()
    }

    /// The bytes a short body wrote.
    ///
    /// Only the task producing the body writes them; the lock (uncontended, once per buffer)
    /// lets the compiler check that instead of a comment.
    private final class Collected: Sendable {
        let buffer = Mutex<ByteBuffer?>(nil)
    }

    /// Writes a short body into memory.
    private struct Collector: ResponseBodyWriter, Sendable {
        let collected: Collected

        // Inlined into the witness that an `any ResponseBodyWriter` call goes through: one
        // async call per buffer, not two.
        @inline(__always)
        mutating func write(_ buffer: ByteBuffer) async throws {
            collected.buffer.withLock { collected in
                var buffer = buffer
                if collected == nil {
                    collected = buffer
                } else {
                    collected?.writeBuffer(&buffer)
                }
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    /// `body`, written inside `scope`, which then closes with the outcome of the write.
    static func wrap(_ body: ResponseBody, closing scope: Scope) -> ResponseBody {
        ResponseBody(contentLength: body.contentLength) { writer in
            let held = HeldBackBody<ByteBuffer>(scope: scope)
            try await scope.runClosingOnFailure(outcome: held.outcome(endingWith:)) {
                try await body.write(Writer(base: writer, held: held))
            }
            // A body that returned without finishing (it should not) still closes its scope.
            try await scope.close(.success)
        }
    }

    /// The writer the wrapped body writes to: forwards every buffer but the last, and on
    /// `finish` closes the scope before forwarding the last one.
    ///
    /// Unchecked: it is written by the one task that writes the response, inside
    /// ``Scope/run(_:)``; the checker cannot follow the writer it wraps through the
    /// task-local binding's closure.
    private struct Writer: ResponseBodyWriter, @unchecked Sendable {
        var base: any ResponseBodyWriter
        let held: HeldBackBody<ByteBuffer>

        @concurrent mutating func write(_ buffer: ByteBuffer) async throws {
            if let previous = held.hold(buffer) { try await forward(previous) }
        }

        @concurrent consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
            if let last = try await held.finish() { try await forward(last) }
            try await base.finish(trailingHeaders)
        }

        @concurrent private mutating func forward(_ buffer: ByteBuffer) async throws {
            try await held.sending { try await base.write(buffer) }
        }
    }
}
