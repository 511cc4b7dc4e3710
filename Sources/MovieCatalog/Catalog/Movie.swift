/// A movie in the catalog, as the API returns it.
package struct Movie: Codable, Hashable, Sendable {
    package var id: Int
    package var title: String
    package var year: Int
    package var director: String?

    /// A movie with these fields.
    package init(id: Int, title: String, year: Int, director: String?) {
        self.id = id
        self.title = title
        self.year = year
        self.director = director
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(year, forKey: .year)
        // The contract shows `"director": null` rather than leaving the key out.
        try container.encode(director, forKey: .director)
    }
}

/// What a client sends to create or replace a movie, validated.
package struct MovieInput: Hashable, Sendable {
    package static let titleLengths = 1...200
    package static let years = 1888...2100

    package var title: String
    package var year: Int
    package var director: String?

    /// Validated fields.
    package init(title: String, year: Int, director: String?) {
        self.title = title
        self.year = year
        self.director = director
    }
}

/// A movie's ratings: how many, and their average (`nil` when there are none).
package struct Rating: Codable, Hashable, Sendable {
    package var movieID: Int
    package var average: Double?
    package var count: Int

    /// A rating with these fields.
    package init(movieID: Int, average: Double?, count: Int) {
        self.movieID = movieID
        self.average = average
        self.count = count
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(movieID, forKey: .movieID)
        try container.encode(average, forKey: .average)
        try container.encode(count, forKey: .count)
    }
}

/// One page of the catalog.
package struct MoviePage: Codable, Hashable, Sendable {
    package var items: [Movie]
    package var total: Int

    /// A page of `items` from a catalog of `total` movies.
    package init(items: [Movie], total: Int) {
        self.items = items
        self.total = total
    }
}

/// One change to a movie, as `GET /changes?movieID=` lists it.
package struct MovieChange: Codable, Hashable, Sendable {
    /// What happened to the movie.
    package enum Action: String, Codable, Sendable {
        case created
        case replaced
        case deleted
    }

    package var movieID: Int
    package var action: Action
    /// The ID of the request that made the change.
    package var requestID: String?
    /// When the change was recorded, in ISO 8601, UTC.
    package var changedAt: String

    /// A change with these fields.
    package init(movieID: Int, action: Action, requestID: String?, changedAt: String) {
        self.movieID = movieID
        self.action = action
        self.requestID = requestID
        self.changedAt = changedAt
    }
}

/// A movie's changes, oldest first.
package struct MovieChanges: Codable, Hashable, Sendable {
    package var items: [MovieChange]
}
