#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A blocking HTTP/1.1 client connection on a plain socket, for one thread at a time.
///
/// It can stop at any byte, which is what the disconnect scenarios need.
final class HTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var isClosed = false

    init(port: Int, timeout: Double = 60) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPClientError.connect(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw HTTPClientError.connect(code)
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// Closes the socket; with `reset`, the peer sees a TCP RST instead of a FIN.
    func close(reset: Bool = false) {
        guard !isClosed else { return }
        isClosed = true
        if reset {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        Glibc.close(fd)
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...]
                .withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw HTTPClientError.io("send", errno)
            }
            offset += written
        }
    }

    /// Sends `request` and reads its response.
    func perform(_ request: HTTPRequest) throws -> HTTPResponse {
        try send(request.bytes)
        return try readResponse()
    }

    /// Sends the head, then streams `bodySize` bytes of `fill` while watching for an early
    /// response (a 413 arrives before the body ends); returns the response and how many body
    /// bytes were sent before it arrived or the server closed the connection.
    func performStreaming(_ request: HTTPRequest, bodySize: Int, fill: UInt8) throws -> (HTTPResponse, sent: Int) {
        try send(request.head(contentLength: bodySize))
        let chunk = [UInt8](repeating: fill, count: 64 * 1024)
        var sent = 0
        while sent < bodySize {
            var poller = pollfd(fd: fd, events: Int16(POLLIN | POLLOUT), revents: 0)
            guard poll(&poller, 1, 10_000) > 0 else { throw HTTPClientError.io("poll", ETIMEDOUT) }
            if poller.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { break }
            let count = min(chunk.count, bodySize - sent)
            let written = chunk.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                break  // The server closed its side; its response may already be here.
            }
            sent += written
        }
        return (try readResponse(), sent)
    }

    /// Reads one response: the status line, the headers, and a `Content-Length` or chunked body.
    func readResponse() throws -> HTTPResponse {
        let headEnd = try readUntil([13, 10, 13, 10])
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw HTTPClientError.malformed(head) }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = HTTPResponse(status: status, headers: headers, body: [])
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let lineEnd = try readUntil([13, 10])
                let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";")[0]
                buffer.removeFirst(lineEnd + 2)
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                    throw HTTPClientError.malformed("chunk size \(sizeText)")
                }
                try fill(size + 2)
                response.body += buffer[..<size]
                buffer.removeFirst(size + 2)
                if size == 0 { break }
            }
        } else {
            let length = Int(response.header("Content-Length") ?? "0") ?? 0
            try fill(length)
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        }
        return response
    }

    /// Whether the server has closed the connection, checked without waiting: a read that
    /// would block means it is still open.
    var isClosedByPeer: Bool {
        var byte: UInt8 = 0
        let received = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if received == 0 { return true }
        if received < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }

    /// Reads at most `count` bytes of whatever arrives next (for stopping mid-response).
    func readSome(_ count: Int) throws -> Int {
        var bytes = [UInt8](repeating: 0, count: count)
        let received = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress, count, 0) }
        if received < 0 { throw HTTPClientError.io("recv", errno) }
        return received
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                var index = searchFrom
                while index + marker.count <= buffer.count {
                    if buffer[index] == marker[0] && Array(buffer[index..<index + marker.count]) == marker {
                        return index
                    }
                    index += 1
                }
                searchFrom = max(0, buffer.count - marker.count + 1)
            }
            try receiveMore()
        }
    }

    private func fill(_ count: Int) throws {
        while buffer.count < count { try receiveMore() }
    }

    private func receiveMore() throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if received > 0 {
                buffer += chunk[..<received]
                return
            }
            if received == 0 { throw HTTPClientError.closed(received: buffer.count) }
            if errno == EINTR { continue }
            if errno == ECONNRESET { throw HTTPClientError.closed(received: buffer.count) }
            throw HTTPClientError.io("recv", errno)
        }
    }
}
