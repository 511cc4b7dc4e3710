import Foundation

/// Clients that leave in the middle of a unit of work that outlives its handler: a streamed
/// export, a WebSocket message.
enum AbandoningClients {
    /// `count` clients, on `threads` threads, each starting `GET /movies/export` and leaving
    /// after reading part of its body, half with a TCP reset.
    ///
    /// Counts `exports left mid-body`, and `errors`.
    static func abandonExports(port: Int, count: Int, threads: Int, into tally: Tally) {
        onThreads(threads) { thread in
            var random = SystemRandomNumberGenerator()
            for index in stride(from: thread, to: count, by: threads) {
                do {
                    let connection = try HTTPConnection(port: port, timeout: 10)
                    try connection.send(HTTPRequest("GET", "/movies/export").head)
                    // The head and a few chunks: the body is still being written.
                    var read = 0
                    let stopAt = Int.random(in: 1_000...20_000, using: &random)
                    while read < stopAt {
                        let received = try connection.readSome(4096)
                        if received == 0 { break }
                        read += received
                    }
                    connection.close(reset: index % 2 == 0)
                    tally.add("exports left mid-body")
                } catch {
                    tally.add("errors", example: "export \(index): \(error)")
                }
            }
        }
    }

    /// How a WebSocket client vanishes.
    enum WebSocketExit: CaseIterable {
        /// Mid-frame: a header announcing 100 bytes, then 30 of them.
        case midFrame
        /// Mid-message: the first fragment of a message, never its last.
        case midFragments
        /// Right after a whole message, before its reply.
        case beforeReply
    }

    /// `count` WebSocket clients of `/movies/live`, on `threads` threads, each upgrading and
    /// then vanishing in one of the ``WebSocketExit`` ways, half with a TCP reset.
    ///
    /// Counts `websockets vanished`, and `errors`.
    static func abandonWebSockets(port: Int, count: Int, threads: Int, into tally: Tally) {
        onThreads(threads) { thread in
            for index in stride(from: thread, to: count, by: threads) {
                do {
                    let connection = try HTTPConnection(port: port, timeout: 10)
                    let upgrade = HTTPRequest(
                        "GET",
                        "/movies/live",
                        headers: [
                            ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
                        ]
                    )
                    try connection.send(upgrade.head)
                    let response = try connection.readResponse()
                    guard response.status == 101 else {
                        tally.add("errors", example: "websocket \(index): upgrade answered \(response.status)")
                        continue
                    }
                    let message = Array(#"{"rate":{"movieID":1,"stars":4}}"#.utf8)
                    let exit = WebSocketExit.allCases[index % WebSocketExit.allCases.count]
                    switch exit {
                    case .midFrame:
                        let frame = maskedFrame(opcode: 0x1, final: true, payload: Array(repeating: 0x41, count: 100))
                        try connection.send(Array(frame.prefix(frame.count - 70)))
                    case .midFragments:
                        try connection.send(maskedFrame(opcode: 0x1, final: false, payload: Array(message.prefix(10))))
                    case .beforeReply:
                        try connection.send(maskedFrame(opcode: 0x1, final: true, payload: message))
                    }
                    connection.close(reset: (index / WebSocketExit.allCases.count) % 2 == 0)
                    tally.add("websockets vanished")
                } catch {
                    tally.add("errors", example: "websocket \(index): \(error)")
                }
            }
        }
    }

    /// A client-to-server WebSocket frame (RFC 6455 §5.2): masked, payload under 126 bytes.
    private static func maskedFrame(opcode: UInt8, final: Bool, payload: [UInt8]) -> [UInt8] {
        precondition(payload.count < 126)
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return [(final ? 0x80 : 0) | opcode, 0x80 | UInt8(payload.count)] + mask
            + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }
}
