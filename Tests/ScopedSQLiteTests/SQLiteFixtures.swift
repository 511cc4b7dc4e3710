import ScopedSQLite

let movieSchema = [
    SQLiteMigrationFixture.movies,
    SQLiteMigrationFixture.ratings,
]

enum SQLiteMigrationFixture {
    static let movies = SQLiteMigration(
        version: 1,
        name: "create movies",
        statements: [
            """
            CREATE TABLE movies (
                id INTEGER PRIMARY KEY,
                title TEXT NOT NULL UNIQUE,
                year INTEGER NOT NULL,
                director TEXT
            );
            """
        ]
    )
    static let ratings = SQLiteMigration(
        version: 2,
        name: "create ratings",
        statements: [
            """
            CREATE TABLE ratings (
                movie_id INTEGER NOT NULL REFERENCES movies(id) ON DELETE CASCADE,
                stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5)
            );
            """
        ]
    )
}

struct MovieRow: Decodable, Equatable, Sendable {
    let id: Int
    let title: String
    let year: Int
    let director: String?
}
