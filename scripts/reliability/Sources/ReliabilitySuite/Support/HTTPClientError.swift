#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

enum HTTPClientError: Error, CustomStringConvertible {
    case connect(Int32)
    case io(String, Int32)
    /// The server closed the connection; `received` bytes of the response had arrived.
    case closed(received: Int)
    case malformed(String)

    var description: String {
        switch self {
        case .connect(let code): "connect failed: \(String(cString: strerror(code)))"
        case .io(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .closed(let received): "connection closed after \(received) response bytes"
        case .malformed(let why): "malformed response: \(why)"
        }
    }
}
