/// A movie in the catalog, as the API returns it.
struct Movie: Codable, Hashable, Sendable {
    var id: Int
    var title: String
    var year: Int
    var director: String?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(year, forKey: .year)
        // The contract shows `"director": null` rather than leaving the key out.
        try container.encode(director, forKey: .director)
    }
}

/// What a client sends to create or replace a movie, validated.
struct MovieInput: Hashable, Sendable {
    static let titleLengths = 1...200
    static let years = 1888...2100

    var title: String
    var year: Int
    var director: String?
}

/// A movie's ratings: how many, and their average (`nil` when there are none).
struct Rating: Codable, Hashable, Sendable {
    var movieID: Int
    var average: Double?
    var count: Int

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(movieID, forKey: .movieID)
        try container.encode(average, forKey: .average)
        try container.encode(count, forKey: .count)
    }
}

/// One page of the catalog.
struct MoviePage: Codable, Hashable, Sendable {
    var items: [Movie]
    var total: Int
}
