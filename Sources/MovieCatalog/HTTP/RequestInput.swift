import NIOFoundationCompat
package import Foundation
package import Hummingbird

/// Reading and validating what clients send.
package enum RequestInput {
    /// The largest request body accepted.
    package static let maximumBodySize = 1 << 20

    /// The body of `POST /movies` and `PUT /movies/{id}`.
    package struct MovieBody: Decodable {
        package var title: String
        package var year: Int
        package var director: String?

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decode(String.self, forKey: .title)
            year = try RequestInput.integer(container, .year, range: MovieInput.years)
            director = try container.decodeIfPresent(String.self, forKey: .director)
        }

        private enum CodingKeys: String, CodingKey {
            case title, year, director
        }
    }

    /// The body of `POST /movies/{id}/ratings`.
    package struct RatingBody: Decodable {
        package var stars: Int

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            stars = try RequestInput.integer(container, .stars, range: 1...5)
        }

        private enum CodingKeys: String, CodingKey {
            case stars
        }
    }

    /// A WebSocket message of `GET /movies/live`: `{"rate":{"movieID":1,"stars":5}}`.
    package struct LiveRatingBody: Decodable {
        package var rate: Rate

        /// The rating to record.
        package struct Rate: Decodable {
            package var movieID: Int
            package var stars: Int

            package init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                movieID = try RequestInput.integer(container, .movieID, range: 1...Int.max)
                stars = try RequestInput.integer(container, .stars, range: 1...5)
                guard movieID > 0 else {
                    throw APIError.invalidField("rate.movieID", "movieID must be a positive integer.")
                }
                guard (1...5).contains(stars) else {
                    throw APIError.invalidField("rate.stars", "stars must be an integer from 1 to 5.")
                }
            }

            private enum CodingKeys: String, CodingKey {
                case movieID
                case stars
            }
        }
    }

    /// An integer field; a number too large for `Int` is reported as out of `range`, not as
    /// malformed JSON.
    fileprivate static func integer<Key: CodingKey>(
        _ container: KeyedDecodingContainer<Key>,
        _ key: Key,
        range: ClosedRange<Int>
    ) throws -> Int {
        do {
            return try container.decode(Int.self, forKey: key)
        } catch {
            guard (try? container.decode(Double.self, forKey: key)) != nil else { throw error }
            throw APIError.invalidField(
                key.stringValue,
                "\(key.stringValue) must be an integer between \(range.lowerBound) and \(range.upperBound)."
            )
        }
    }

    /// The positive integer ID in the path.
    package static func id(_ context: some RequestContext) throws -> Int {
        guard let text = context.parameters.get("id"), let id = Int(text), id > 0 else {
            throw APIError.badRequest("The id must be a positive integer.", field: "id", code: "invalid_id")
        }
        return id
    }

    /// An integer query parameter in `range`, or `defaultValue` when absent.
    package static func query(_ request: Request, _ name: String, default defaultValue: Int, in range: ClosedRange<Int>)
        throws
        -> Int
    {
        guard let text = request.uri.queryParameters.get(name) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            let upper = range.upperBound == .max ? "" : " and at most \(range.upperBound)"
            throw APIError.badRequest(
                "\(name) must be an integer of at least \(range.lowerBound)\(upper).",
                field: name,
                code: "invalid_query"
            )
        }
        return value
    }

    /// Decodes a JSON body of at most 1 MiB: 413 when larger, 400 when not JSON, 422 naming the
    /// field when a field is missing or of the wrong type.
    package static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let buffer = try await request.body.collect(upTo: RequestInput.maximumBodySize)
        return try decode(T.self, json: Data(buffer: buffer))
    }

    /// Decodes a JSON document: 400 when not JSON, 422 naming the field when a field is missing
    /// or of the wrong type.
    package static func decode<T: Decodable>(_ type: T.Type, json: Data) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: json)
        } catch let error as DecodingError {
            throw Self.apiError(for: error)
        }
    }

    private static func apiError(for error: DecodingError) -> APIError {
        switch error {
        case .keyNotFound(let key, let context):
            return .invalidField(
                fieldName(context.codingPath + [key]),
                "\(fieldName(context.codingPath + [key])) is required."
            )
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            guard !context.codingPath.isEmpty else {
                return .badRequest("The body must be a JSON object.", code: "malformed_json")
            }
            let field = fieldName(context.codingPath)
            return .invalidField(field, "\(field) must be \(describe(type)).")
        case .dataCorrupted(let context):
            guard !context.codingPath.isEmpty else {
                return .badRequest("The body is not valid JSON.", code: "malformed_json")
            }
            let field = fieldName(context.codingPath)
            return .invalidField(field, "\(field) is out of range or malformed.")
        @unknown default:
            return .badRequest("The body could not be read.", code: "malformed_json")
        }
    }

    private static func fieldName(_ path: [any CodingKey]) -> String {
        path.map(\.stringValue).joined(separator: ".")
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "an integer"
        case is String.Type: "a string"
        default: "a \(type)"
        }
    }

    /// Validates a movie body: 422 naming the field at fault.
    ///
    /// Text may hold any character but U+0000, which PostgreSQL cannot store in `text`: the
    /// contract is the same on both backends, so SQLite refuses it too.
    package static func validate(_ body: MovieBody) throws -> MovieInput {
        // Lengths count Unicode scalars, as JSON Schema's `maxLength` does.
        guard MovieInput.titleLengths.contains(body.title.unicodeScalars.count) else {
            throw APIError.invalidField("title", "title must be 1 to 200 characters long.")
        }
        guard !body.title.unicodeScalars.contains("\u{0}") else {
            throw APIError.invalidField("title", "title must not contain the character U+0000.")
        }
        guard MovieInput.years.contains(body.year) else {
            throw APIError.invalidField("year", "year must be between 1888 and 2100.")
        }
        if let director = body.director, !MovieInput.titleLengths.contains(director.unicodeScalars.count) {
            throw APIError.invalidField("director", "director must be 1 to 200 characters long, or null.")
        }
        if let director = body.director, director.unicodeScalars.contains("\u{0}") {
            throw APIError.invalidField("director", "director must not contain the character U+0000.")
        }
        return MovieInput(title: body.title, year: body.year, director: body.director)
    }

    /// Validates a rating body: 422 unless 1 to 5 stars.
    package static func validate(_ body: RatingBody) throws -> Int {
        guard (1...5).contains(body.stars) else {
            throw APIError.invalidField("stars", "stars must be an integer from 1 to 5.")
        }
        return body.stars
    }
}
