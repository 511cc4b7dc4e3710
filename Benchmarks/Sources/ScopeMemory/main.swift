#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Scoped
import ScopedTenants

// Bytes per open scope, from resident memory (/proc/<pid>/status, VmRSS):
//
//   ScopeMemory scopes [COUNT]                 COUNT request scopes open at once in this
//                                              process, each with one scope service built.
//   ScopeMemory tenants [COUNT]                COUNT tenants open at once, each with one tenant
//                                              service built; then COUNT opened in turn with at
//                                              most 100 open, resident memory flat.
//   ScopeMemory websockets PORT PID [COUNT]    COUNT idle WebSocket connections to
//                                              ExampleServer's /movies/live on PORT; PID's
//                                              resident memory before and after.
//
// Each prints one Markdown table row for BENCHMARKS.md.

/// A scope service of about the size of a request's session: a class with a few fields.
final class RequestSession: Sendable {
    let id: Int
    let label: String
    init(id: Int, label: String) {
        self.id = id
        self.label = label
    }
}

enum RequestSessionKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.scope
    static func makeValue() async throws -> RequestSession {
        RequestSession(id: ScopedValues.current.requestNumber, label: "session")
    }
}

extension ScopedValues {
    @Entry var requestNumber: Int = 0
}

/// The resident memory of process `pid` (this one by default), in bytes.
func residentMemory(of pid: String = "self") -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    else { return 0 }
    return kilobytes * 1024
}

func row(_ what: String, count: Int, before: Int, after: Int) -> String {
    let perItem = Double(after - before) / Double(count)
    return "| \(what) | \(count) | \(before / 1024) KiB | \(after / 1024) KiB | \(Int(perItem.rounded())) |"
}

/// Opens `count` request scopes on one root, builds one scope service in each, and measures
/// what they hold while all are open.
func measureScopes(_ count: Int) async throws -> String {
    let root = ScopeRoot(services: [RequestSessionKey.self])
    // A first scope, so that what every scope shares (metadata, the root's tables) is counted
    // before.
    let warm = try root.openScope { $0.requestNumber = -1 }
    _ = try await warm.run { try await ScopedValues.current.service(RequestSessionKey.self) }
    try await warm.close(.success)
    let before = residentMemory()
    var scopes: [Scope] = []
    scopes.reserveCapacity(count)
    for number in 0..<count {
        let scope = try root.openScope { $0.requestNumber = number }
        _ = try await scope.run { try await ScopedValues.current.service(RequestSessionKey.self) }
        scopes.append(scope)
    }
    let after = residentMemory()
    precondition(root.openScopeCount == count)
    for scope in scopes { try await scope.close(.success) }
    return row("request scope open, 1 scope service built", count: count, before: before, after: after)
}

/// Opens `count` WebSocket connections to ExampleServer's `/movies/live` and measures the
/// server's resident memory while all are open and idle.
func measureWebSockets(port: Int, pid: String, count: Int) throws -> String {
    // Settle: the server's first requests allocate what every connection shares.
    var sockets: [Int32] = []
    for _ in 0..<8 { sockets.append(try upgrade(port: port)) }
    for fd in sockets { close(fd) }
    sockets.removeAll()
    Thread.sleep(forTimeInterval: 1)
    let before = residentMemory(of: pid)
    for _ in 0..<count { sockets.append(try upgrade(port: port)) }
    Thread.sleep(forTimeInterval: 1)
    let after = residentMemory(of: pid)
    for fd in sockets { close(fd) }
    return row("idle WebSocket connection to /movies/live (its scope open)", count: count, before: before, after: after)
}

/// A connection upgraded to a WebSocket: the request sent and the 101 read.
func upgrade(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else { throw MemoryError("connect: \(String(cString: strerror(errno)))") }
    let request = """
        GET /movies/live HTTP/1.1\r
        Host: 127.0.0.1\r
        Upgrade: websocket\r
        Connection: Upgrade\r
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
        Sec-WebSocket-Version: 13\r
        \r

        """
    let bytes = Array(request.utf8)
    guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
        throw MemoryError("send failed")
    }
    var head: [UInt8] = []
    var byte: UInt8 = 0
    while !head.ends(with: Array("\r\n\r\n".utf8)) {
        guard recv(fd, &byte, 1, 0) == 1 else { throw MemoryError("no upgrade response") }
        head.append(byte)
    }
    guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
        throw MemoryError("not upgraded: \(String(decoding: head, as: UTF8.self))")
    }
    return fd
}

struct MemoryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element: Equatable {
    func ends(with suffix: [Element]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}

/// A tenant service of about the size of a tenant's handle on its database: a class with a
/// few fields. (A real database's own memory, its page cache and connections, is the
/// database's; this measures what Scoped keeps per tenant.)
final class TenantHandle: Sendable {
    let tenant: TenantID?
    let label: String
    init(tenant: TenantID?, label: String) {
        self.tenant = tenant
        self.label = label
    }
}

enum TenantHandleKey: ScopedServiceKey {
    static let lifetime = ScopedLifetime.tenant
    static func makeValue() async throws -> TenantHandle {
        TenantHandle(tenant: ScopedValues.current.tenant, label: "handle")
    }
}

/// Opens `count` tenants in turn on a root that keeps at most 100 open, and measures resident
/// memory after a tenth of them and after all (first, in a fresh process, so that the figure
/// is not hidden in memory freed earlier); then opens `count` tenants on one root, each with
/// one tenant service built, and measures what they hold while all are open.
func measureTenants(_ count: Int) async throws -> [String] {
    func tenant(_ number: Int) -> TenantID { TenantID("tenant-\(number)")! }
    let bounded = ScopeRoot(services: [TenantHandleKey.self], observers: [Tenancy(maximumOpen: 100, idleTimeout: nil)])
    var afterTenth = 0
    let turnsBefore = residentMemory()
    for number in 0..<count {
        try await bounded.withScope(tenant: tenant(number)) {
            _ = try await ScopedValues.current.service(TenantHandleKey.self)
        }
        if number == count / 10 - 1 {
            // The evicted tenants' closes run in tasks of their own: let them finish.
            while bounded.tenantStatistics.evicted < number + 1 - 100 { try await Task.sleep(for: .milliseconds(1)) }
            afterTenth = residentMemory()
        }
    }
    try await Task.sleep(for: .milliseconds(100))
    let afterAll = residentMemory()
    let evicted = bounded.tenantStatistics.evicted
    await bounded.shutdown()
    let root = ScopeRoot(services: [TenantHandleKey.self], observers: [Tenancy(idleTimeout: nil)])
    try await root.withScope(tenant: tenant(-1)) { _ = try await ScopedValues.current.service(TenantHandleKey.self) }
    let before = residentMemory()
    for number in 0..<count {
        try await root.withScope(tenant: tenant(number)) {
            _ = try await ScopedValues.current.service(TenantHandleKey.self)
        }
    }
    let after = residentMemory()
    precondition(root.tenantStatistics.open == count + 1)
    await root.shutdown()

    return [
        row("tenant open, 1 tenant service built", count: count, before: before, after: after),
        "| \(count) tenants opened in turn, at most 100 open (\(evicted) evicted): RSS after \(count / 10) "
            + "/ after \(count) | \(count) | \(afterTenth / 1024) KiB | \(afterAll / 1024) KiB | "
            + "\(Int((Double(afterAll - afterTenth) / Double(count - count / 10)).rounded())) |"
            + " <!-- started at \(turnsBefore / 1024) KiB -->",
    ]
}

let arguments = Array(CommandLine.arguments.dropFirst())
print("| what is held open | count | RSS before | RSS after | bytes each |")
print("|---|---:|---:|---:|---:|")
switch arguments.first {
case "scopes":
    print(try await measureScopes(arguments.dropFirst().first.flatMap(Int.init) ?? 10_000))
case "tenants":
    for line in try await measureTenants(arguments.dropFirst().first.flatMap(Int.init) ?? 10_000) { print(line) }
case "websockets" where arguments.count >= 3:
    print(
        try measureWebSockets(
            port: Int(arguments[1])!,
            pid: arguments[2],
            count: arguments.dropFirst(3).first.flatMap(Int.init) ?? 10_000
        )
    )
default:
    print("usage: ScopeMemory scopes [COUNT] | tenants [COUNT] | websockets PORT PID [COUNT]")
    exit(2)
}
