import Foundation

/// 9b.
///
/// No secrets in logs at any level: with `log.level=trace`, requests carry secrets in every place a client puts them
/// (Authorization, Cookie, an API-key header, the query string, the body of accepted and rejected requests); none may
/// reach the log.
enum LogSecretsScenario {
    static func run(_ suite: SuiteOptions) async throws -> ScenarioResult {
        var result = ScenarioResult("log-secrets")
        let server = try ServerProcess(
            suite,
            profile: "development",
            database: suite.databaseFile("log-secrets"),
            environment: ["LOG_LEVEL": "trace"]
        )
        let secret = "s3cr3t-\(UUID().uuidString)"
        let credentials = [
            ("Authorization", "Bearer \(secret)"),
            ("Cookie", "session=\(secret)"),
            ("X-Api-Key", secret),
            ("Proxy-Authorization", "Basic \(secret)"),
        ]
        let requests = [
            HTTPRequest("GET", "/movies?api_key=\(secret)"),
            HTTPRequest("GET", "/movies/1?token=\(secret)"),
            HTTPRequest("GET", "/movies/abc?password=\(secret)"),
            HTTPRequest("GET", "/no-such-route?secret=\(secret)"),
            HTTPRequest("POST", "/movies", json: #"{"title":"Logged","year":2000,"password":"\#(secret)"}"#),
            HTTPRequest("POST", "/movies", json: #"{"title":"\#(secret)","year":"not a number"}"#),
            HTTPRequest("POST", "/movies", json: #"{"title": \#(secret)"#),
            HTTPRequest("POST", "/movies/1/ratings", json: #"{"stars":"\#(secret)"}"#),
            HTTPRequest("GET", "/debug/echo?key=\(secret)"),
        ]
        var ids: [String] = []
        for (index, request) in requests.enumerated() {
            var request = request
            let id = "log-secrets-\(index)"
            ids.append(id)
            request.headers += credentials + [("X-Request-ID", id)]
            _ = try HTTPConnection(port: server.port).perform(request)
        }
        server.stop()
        let log = server.log
        let leaks = log.split(separator: "\n").filter { $0.contains(secret) }
        let logged = ids.filter { log.contains($0) }.count
        result.report("\(requests.count) requests at log level trace, \(log.split(separator: "\n").count) log lines")
        result.check(
            "requests whose lines reached the log \(logged)/\(ids.count)",
            target: "all (the check is not vacuous)",
            logged == ids.count
        )
        result.check("log lines holding a secret \(leaks.count)", target: "0", leaks.isEmpty)
        if let first = leaks.first { result.report("first: \(first.prefix(300))") }
        return result
    }
}
