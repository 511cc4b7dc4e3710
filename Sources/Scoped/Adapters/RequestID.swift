import Synchronization

extension ScopedValues {
    /// The ID of the request the current scope serves; `nil` outside a request.
    ///
    /// It holds the client's `X-Request-ID` when the client sent a valid one (1 to 64
    /// characters from `A-Z a-z 0-9 . _ -`), and else the ID the stack made for the request:
    /// the same ID the response's `X-Request-ID` returns and the request's log lines carry.
    ///
    /// Every adapter's request scope sets it: Hummingbird's `RequestScopeMiddleware` (the ID
    /// its logger carries as `hb.request.id`, the client's with `RequestIDMiddleware`), Vapor's (`Request.id`, which Vapor takes from
    /// `X-Request-Id`), the OpenAPI middleware (a client's `X-Request-ID`, else a new one) and
    /// the gRPC interceptor (a client's `x-request-id` metadata, else a new one). It is one entry
    /// in the core so that a handler, and every service it reads, names its request the same way
    /// whichever stack serves it.
    public var requestID: String? {
        get { self[RequestIDKey.self] }
        set { self[RequestIDKey.self] = newValue }
    }
}

/// The key of ``ScopedValues/requestID``, written by hand: the core builds without its macro.
private struct RequestIDKey: ScopedKey {
    static let defaultValue: String? = nil
}

/// The request IDs every adapter accepts from a client, and makes when its stack has none: the
/// rule an adapter applies before it sets ``ScopedValues/requestID``.
///
/// ```swift
/// let requestID = RequestIDs.accepting(incomingHeader) ?? RequestIDs.next()
/// let scope = root.openScope { $0.requestID = requestID }
/// ```
///
/// A new ID is 32 hexadecimal digits: a random half drawn once per process and a counter, as
/// Hummingbird makes its own. IDs name requests in logs and traces; they are unique, not secret.
/// Making one costs no system call (Foundation's `UUID()` reads `/dev/urandom` each time: 3.7 µs
/// here, 5–7% of a small request's CPU).
public enum RequestIDs {
    private static let processHalf = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(UInt64.random(in: .min ... .max))

    /// A new ID, different from every other this process made.
    public static func next() -> String {
        let count = counter.add(1, ordering: .relaxed).newValue
        return hex(processHalf) + hex(count)
    }

    /// `incoming` when it is a valid request ID (1 to 64 characters from `A-Z a-z 0-9 . _ -`),
    /// else `nil`: a client's ID goes into logs only when it cannot forge their lines.
    public static func accepting(_ incoming: String) -> String? {
        guard (1...64).contains(incoming.utf8.count) else { return nil }
        let valid = incoming.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        return valid ? incoming : nil
    }

    /// `value` as 16 hexadecimal digits.
    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
