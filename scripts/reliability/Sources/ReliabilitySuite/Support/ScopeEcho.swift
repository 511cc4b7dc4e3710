/// Mirrors the server's `/debug/echo` body.
struct ScopeEcho: Decodable {
    struct Reading: Decodable {
        var requestID: String?
        var repository: String
    }
    var handler: Reading
    var asyncLet: Reading
    var taskGroup: [Reading]
    var database: String?
    var afterDatabase: Reading
}
