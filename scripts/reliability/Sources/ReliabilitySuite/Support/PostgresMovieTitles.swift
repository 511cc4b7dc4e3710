import ScopedTestSupport

extension PostgresTestServer {
    /// The titles of the movies stored in `database`, by ID, read with `psql`, outside the server:
    /// what a PostgreSQL scenario checks its acknowledged writes against, as `RawDatabase` does on
    /// SQLite.
    func movieTitles(database: String) throws -> [Int: String] {
        try psqlBlocking("SELECT id || '|' || title FROM movies", database: database)
            .split(separator: "\n")
            .reduce(into: [Int: String]()) { titles, line in
                let parts = line.split(separator: "|", maxSplits: 1)
                if parts.count == 2, let id = Int(parts[0]) { titles[id] = String(parts[1]) }
            }
    }
}
