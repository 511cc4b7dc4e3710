/// An HTTP/1.1 request as bytes on the wire; nothing is normalised, so malformed requests can
/// be sent on purpose.
struct HTTPRequest: Sendable {
    var method: String
    var path: String
    var headers: [(String, String)] = []
    var body: [UInt8] = []

    init(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    init(_ method: String, _ path: String, headers: [(String, String)] = [], json: String) {
        self.init(method, path, headers: headers + [("Content-Type", "application/json")], body: Array(json.utf8))
    }

    /// The request line and headers, with `Host` and `Content-Length` added.
    var head: [UInt8] {
        head(contentLength: !body.isEmpty || method == "POST" || method == "PUT" ? body.count : nil)
    }

    func head(contentLength: Int?) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let contentLength { text += "Content-Length: \(contentLength)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    var bytes: [UInt8] { head + body }
}
