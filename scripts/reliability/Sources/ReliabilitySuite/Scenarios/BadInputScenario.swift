import Foundation

/// 4. Bad input: every malformed, mistyped, oversized or hostile request gets its documented
/// 4xx with a JSON error naming the field, nothing crashes, and no rejected request changes a row.
enum BadInputScenario {
    /// A request and the answer the server documents for it.
    struct Case {
        var name: String
        var request: HTTPRequest
        var status: Int
        /// The field the JSON error must name, if any.
        var field: String? = nil
        /// For a streamed body: its size (the request's own body is ignored).
        var streamedBody: Int? = nil
        /// Whether the answer may come without a JSON body (a connection-level rejection).
        var bare = false
    }

    static let injections = [
        "'; DROP TABLE movies; --",
        "1' OR '1'='1",
        "\" OR \"\"=\"",
        "Robert'); DELETE FROM ratings; --",
        "1; UPDATE movies SET title = 'owned'",
        "' UNION SELECT sql FROM sqlite_master --",
        "%27%20OR%201=1",
    ]

    static func rejections() -> [Case] {
        func post(_ name: String, _ json: String, _ status: Int, field: String? = nil, path: String = "/movies") -> Case
        {
            Case(name: name, request: HTTPRequest("POST", path, json: json), status: status, field: field)
        }
        var cases = [
            post("truncated JSON", #"{"title":"#, 400),
            post("not JSON", "title=Alien&year=1979", 400),
            post("array body", "[]", 400),
            post("string body", #""movie""#, 400),
            post("empty body", "", 400),
            post("title is a number", #"{"title":5,"year":2000}"#, 422, field: "title"),
            post("year is a string", #"{"title":"Alien","year":"1979"}"#, 422, field: "year"),
            post("year is a fraction", #"{"title":"Alien","year":1979.5}"#, 422, field: "year"),
            post("empty director", #"{"title":"Alien","year":1979,"director":""}"#, 422, field: "director"),
            post(
                "director of 201 characters",
                #"{"title":"Alien","year":1979,"director":"\#(String(repeating: "d", count: 201))"}"#,
                422,
                field: "director"
            ),
            post("director is a number", #"{"title":"Alien","year":1979,"director":7}"#, 422, field: "director"),
            post("missing title", #"{"year":1979}"#, 422, field: "title"),
            post("missing year", #"{"title":"Alien"}"#, 422, field: "year"),
            post("empty object", "{}", 422, field: "title"),
            post("null title", #"{"title":null,"year":1979}"#, 422, field: "title"),
            post("huge year", #"{"title":"Alien","year":99999999999999999999999999}"#, 422, field: "year"),
            // Valid JSON grammar, but no machine number holds it: the parser refuses the body.
            post("year 1e400", #"{"title":"Alien","year":1e400}"#, 400),
            post("negative year", #"{"title":"Alien","year":-1979}"#, 422, field: "year"),
            post("empty title", #"{"title":"","year":1979}"#, 422, field: "title"),
            // PostgreSQL's text cannot hold U+0000; both backends refuse it alike.
            post("U+0000 in the title", #"{"title":"nul \u0000 byte","year":1979}"#, 422, field: "title"),
            post(
                "U+0000 in the director",
                #"{"title":"Alien","year":1979,"director":"\u0000"}"#,
                422,
                field: "director"
            ),
            post(
                "title of 10,000 characters",
                #"{"title":"\#(String(repeating: "a", count: 10_000))","year":1979}"#,
                422,
                field: "title"
            ),
            post("stars out of range", #"{"stars":6}"#, 422, field: "stars", path: "/movies/1/ratings"),
            post("stars is text", #"{"stars":"five"}"#, 422, field: "stars", path: "/movies/1/ratings"),
            post("stars missing", "{}", 422, field: "stars", path: "/movies/1/ratings"),
            post("huge stars", #"{"stars":1e300}"#, 422, field: "stars", path: "/movies/1/ratings"),
            Case(
                name: "invalid UTF-8",
                request: HTTPRequest(
                    "POST",
                    "/movies",
                    headers: [("Content-Type", "application/json")],
                    body: Array(#"{"title":""#.utf8) + [0xFF, 0xFE, 0xC3] + Array(#"","year":2000}"#.utf8)
                ),
                status: 400
            ),
            Case(name: "2 MiB body", request: HTTPRequest("POST", "/movies"), status: 413, streamedBody: 2 << 20),
            Case(name: "100 MiB body", request: HTTPRequest("POST", "/movies"), status: 413, streamedBody: 100 << 20),
            Case(
                name: "PUT with 2 MiB body",
                request: HTTPRequest("PUT", "/movies/1"),
                status: 413,
                streamedBody: 2 << 20
            ),
            Case(
                name: "X-Catalog injection",
                request: HTTPRequest("GET", "/movies", headers: [("X-Catalog", "fixture' OR 1=1")]),
                status: 400,
                field: "X-Catalog"
            ),
            Case(
                name: "100 KiB header",
                request: HTTPRequest(
                    "GET",
                    "/movies",
                    headers: [("X-Padding", String(repeating: "p", count: 100 << 10))]
                ),
                status: 400,
                bare: true
            ),
            Case(
                name: "2,000 headers, 150 KiB",
                request: HTTPRequest(
                    "GET",
                    "/movies",
                    headers: (0..<2000).map { ("X-H\($0)", String(repeating: "h", count: 64)) }
                ),
                status: 400,
                bare: true
            ),
            Case(
                name: "1,200 small headers, 12 KiB",
                request: HTTPRequest("GET", "/movies", headers: (0..<1200).map { ("X\($0)", "h") }),
                status: 400,
                bare: true
            ),
        ]
        for id in ["-1", "0", "abc", "1.5", "99999999999999999999999", "1%20OR%201=1", "1;DROP%20TABLE%20movies"] {
            cases.append(
                Case(name: "GET id \(id)", request: HTTPRequest("GET", "/movies/\(id)"), status: 400, field: "id")
            )
            cases.append(
                Case(name: "DELETE id \(id)", request: HTTPRequest("DELETE", "/movies/\(id)"), status: 400, field: "id")
            )
            cases.append(post("PUT id \(id)", #"{"title":"x","year":2000}"#, 400, field: "id", path: "/movies/\(id)"))
            cases[cases.count - 1].request.method = "PUT"
            cases.append(post("rate id \(id)", #"{"stars":3}"#, 400, field: "id", path: "/movies/\(id)/ratings"))
        }
        for (name, query) in [
            ("limit", "abc"), ("limit", "0"), ("limit", "100000"), ("offset", "-1"),
            ("limit", "1;DROP%20TABLE%20movies"), ("offset", "0%20OR%201=1"),
        ] {
            cases.append(
                Case(
                    name: "\(name)=\(query)",
                    request: HTTPRequest("GET", "/movies?\(name)=\(query)"),
                    status: 400,
                    field: name
                )
            )
        }
        for injection in injections {
            var allowed = CharacterSet.urlPathAllowed
            allowed.remove(charactersIn: "/?&=+#%;")
            let encoded = injection.addingPercentEncoding(withAllowedCharacters: allowed)!
            cases.append(
                Case(
                    name: "injection as limit",
                    request: HTTPRequest("GET", "/movies?limit=\(encoded)"),
                    status: 400,
                    field: "limit"
                )
            )
            cases.append(
                Case(
                    name: "injection as offset",
                    request: HTTPRequest("GET", "/movies?offset=\(encoded)"),
                    status: 400,
                    field: "offset"
                )
            )
            cases.append(
                Case(
                    name: "injection as id",
                    request: HTTPRequest("GET", "/movies/\(encoded)"),
                    status: 400,
                    field: "id"
                )
            )
            cases.append(
                Case(
                    name: "injection as DELETE id",
                    request: HTTPRequest("DELETE", "/movies/\(encoded)"),
                    status: 400,
                    field: "id"
                )
            )
            let escaped = jsonString(injection)
            cases.append(post("injection as year", #"{"title":"x","year":\#(escaped)}"#, 422, field: "year"))
            cases.append(
                post("injection as stars", #"{"stars":\#(escaped)}"#, 422, field: "stars", path: "/movies/1/ratings")
            )
        }
        cases.append(
            Case(name: "unknown route", request: HTTPRequest("GET", "/movies/1/../../etc/passwd"), status: 404)
        )
        cases.append(
            Case(name: "DELETE a missing movie", request: HTTPRequest("DELETE", "/movies/999999"), status: 404)
        )
        return cases
    }

    static func run(_ suite: SuiteOptions, on backend: Store.Backend) async throws -> ScenarioResult {
        let store = try Store(backend, suite: suite, name: "bad-input")
        var result = ScenarioResult(store.scenarioName("bad-input"))
        let server = try store.startServer(suite, profile: "development")
        defer { server.stop() }
        let before = try store.contentDigest()
        let memoryBefore = server.residentMemory ?? 0

        var wrong: [String] = []
        var largestSent = 0
        let cases = rejections()
        for testCase in cases {
            let connection = try HTTPConnection(port: server.port, timeout: 30)
            let response: HTTPResponse
            do {
                if let size = testCase.streamedBody {
                    let sent: Int
                    (response, sent) = try connection.performStreaming(
                        testCase.request,
                        bodySize: size,
                        fill: UInt8(ascii: "a")
                    )
                    largestSent = max(largestSent, sent)
                } else {
                    response = try connection.perform(testCase.request)
                }
            } catch {
                wrong.append("\(testCase.name): \(error)")
                continue
            }
            if let problem = check(response, against: testCase) { wrong.append("\(testCase.name): \(problem)") }
        }
        let memoryGrowth = max(0, (server.residentMemory ?? 0) - memoryBefore)
        let after = try store.contentDigest()
        result.check("\(wrong.count) of \(cases.count) rejections not the documented 4xx", target: "0", wrong.isEmpty)
        for problem in wrong.prefix(10) { result.report(problem) }
        result.check(
            "rows changed by rejected requests: \(before == after ? 0 : 1)",
            target: "0 (\(before))",
            before == after
        )

        // Injection text in text fields is data: stored and returned byte for byte, nothing else.
        var mangled = 0
        for injection in injections {
            let connection = try HTTPConnection(port: server.port)
            let body = #"{"title":\#(jsonString(injection)),"year":2000,"director":\#(jsonString(injection))}"#
            let created = try connection.perform(HTTPRequest("POST", "/movies", json: body))
            guard created.status == 201, let movie = try? created.json(Movie.self) else {
                mangled += 1
                continue
            }
            let read = try connection.perform(HTTPRequest("GET", "/movies/\(movie.id)"))
            let stored = try store.movieTitles()[movie.id]
            if (try? read.json(Movie.self)) != Movie(id: movie.id, title: injection, director: injection)
                || stored != injection
            {
                mangled += 1
            }
            _ = try connection.perform(HTTPRequest("DELETE", "/movies/\(movie.id)"))
        }
        result.check(
            "injection strings stored other than verbatim: \(mangled) of \(injections.count)",
            target: "0",
            mangled == 0
        )
        result.report("the 413 for a 100 MiB body came after \(largestSent >> 20) MiB sent")
        result.check(
            "server resident memory growth \(memoryGrowth >> 20) MiB",
            target: "< 64 MiB (bodies are not buffered)",
            memoryGrowth < 64 << 20
        )
        let alive =
            server.isRunning
            && (try? HTTPConnection(port: server.port).perform(HTTPRequest("GET", "/health")).status) == 200
        result.check("crashes \(alive ? 0 : 1)", target: "0", alive)
        return result
    }

    private static func check(_ response: HTTPResponse, against testCase: Case) -> String? {
        guard response.status == testCase.status else {
            return "\(response.status) instead of \(testCase.status): \(response.text.prefix(200))"
        }
        if testCase.bare { return nil }
        guard let error = response.errorBody else { return "no JSON error body: \(response.text.prefix(200))" }
        guard response.header("X-Request-ID") != nil else { return "no X-Request-ID" }
        if let field = testCase.field, error.field != field {
            return "the error names \(error.field ?? "no field"), not \(field): \(response.text.prefix(200))"
        }
        return nil
    }

    static func jsonString(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }
}
