import Foundation

/// 5. Production lockdown: with the production profile, the override header and the debug
/// routes are tried on every route. No request may be served by another variant, and no debug
/// route may answer; a production profile that asks for debug routes must not start.
enum ProductionLockdownScenario {
    static func run(_ suite: SuiteOptions) async throws -> ScenarioResult {
        var result = ScenarioResult("lockdown")
        let database = suite.databaseFile("lockdown")
        let server = try ServerProcess(suite, profile: "production", database: database)
        defer { server.stop() }
        let connection = try HTTPConnection(port: server.port)

        // Production's own rows, none of which the fixture holds.
        var productionIDs: [Int] = []
        for index in 1...3 {
            let created = try connection.perform(
                HTTPRequest("POST", "/movies", json: #"{"title":"production-\#(index)","year":2020}"#)
            )
            guard created.status == 201, let movie = try? created.json(Movie.self) else {
                throw SuiteError("cannot create a production movie: \(created.status) \(created.text)")
            }
            productionIDs.append(movie.id)
        }
        let fixtureTitles = ["Toy Story", "A Bug's Life", "Toy Story 2"]
        let overrides = [("X-Catalog", "fixture"), ("x-catalog", "fixture"), ("X-Catalog", "sqlite")]
        let id = productionIDs[0]
        let routes: [HTTPRequest] = [
            HTTPRequest("GET", "/health"),
            HTTPRequest("GET", "/movies"),
            HTTPRequest("GET", "/movies?limit=500"),
            HTTPRequest("GET", "/movies/\(id)"),
            HTTPRequest("GET", "/movies/2"),
            HTTPRequest("PUT", "/movies/\(id)", json: #"{"title":"production-1","year":2021}"#),
            HTTPRequest("POST", "/movies/\(id)/ratings", json: #"{"stars":4}"#),
            HTTPRequest("GET", "/movies/\(id)/rating"),
            HTTPRequest("DELETE", "/movies/3"),
        ]
        var tried = 0
        var servedByVariant: [String] = []
        for route in routes {
            for override in overrides {
                var request = route
                request.headers.append(override)
                let withOverride = try connection.perform(request)
                tried += 1
                let text = withOverride.text
                if fixtureTitles.contains(where: { text.contains($0) }) || withOverride.status >= 500 {
                    servedByVariant.append(
                        "\(route.method) \(route.path) with \(override.0): \(withOverride.status) \(text.prefix(120))"
                    )
                }
            }
        }
        // A write sent with the override must land in production's database.
        let created = try connection.perform(
            HTTPRequest(
                "POST",
                "/movies",
                headers: [("X-Catalog", "fixture")],
                json: #"{"title":"written-with-override","year":2022}"#
            )
        )
        tried += 1
        let landed = try RawDatabase(database.path).movieTitles().values.contains("written-with-override")
        if created.status != 201 || !landed {
            servedByVariant.append("POST /movies with X-Catalog: \(created.status), in production's file: \(landed)")
        }
        result.check(
            "\(servedByVariant.count) of \(tried) requests with an override served by a non-production variant",
            target: "0",
            servedByVariant.isEmpty
        )
        if let first = servedByVariant.first { result.report("first: \(first)") }

        var reachable: [String] = []
        var probes = 0
        for path in [
            "/debug/scope", "/debug/echo", "/debug/stats", "/debug/graph", "/debug/graph?format=dot",
            "/debug/hanging-close",
            "/debug/scope?x=1",
            "/debug/", "/debug",
        ] {
            for method in ["GET", "POST", "PUT", "DELETE"] {
                for headers in [[], [("X-Catalog", "fixture")]] {
                    probes += 1
                    let response = try HTTPConnection(port: server.port)
                        .perform(HTTPRequest(method, path, headers: headers))
                    let leaks =
                        response.text.contains("entries") || response.text.contains("otherOpenScopes")
                        || response.text.contains("handler")
                    if (response.status != 404 && response.status != 405) || leaks {
                        reachable.append("\(method) \(path): \(response.status)")
                    }
                }
            }
        }
        result.check("debug routes reachable \(reachable.count) of \(probes) probes", target: "0", reachable.isEmpty)
        if let first = reachable.first { result.report("first: \(first)") }

        // The profile cannot be talked into serving them.
        let refused = try ServerProcess(
            suite,
            profile: "production",
            database: suite.databaseFile("lockdown-refused"),
            environment: ["DEBUG_ROUTES": "true"],
            waitUntilHealthy: false
        )
        let status = refused.waitForExit(timeout: .seconds(30))
        result.check(
            "production with DEBUG_ROUTES=true: exit \(status.map(String.init) ?? "none, still running")",
            target: "non-zero, naming debug.routes",
            status != nil && status != 0 && refused.log.contains("debug.routes")
        )
        refused.stop()
        return result
    }
}
