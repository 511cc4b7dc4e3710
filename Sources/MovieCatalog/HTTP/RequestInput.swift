package import Foundation
package import OpenAPIRuntime
package import Hummingbird
import NIOFoundationCompat
import HTTPTypes

/// Validating what clients send, beyond what the generated server decodes, and naming the
/// field at fault when it cannot decode it.
package enum RequestInput {
    /// The largest request body accepted.
    package static let maximumBodySize = 1 << 20

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

    /// An integer query parameter, as `openapi.yaml` declares it: the generated server checks
    /// its type, not its range, and reports it missing without its name.
    package struct QueryParameter: Hashable, Sendable {
        package var name: String
        package var range: ClosedRange<Int>
        package var required: Bool

        /// A parameter named `name`, accepting `range`, and `required` or not.
        package init(name: String, range: ClosedRange<Int>, required: Bool = false) {
            self.name = name
            self.range = range
            self.required = required
        }
    }

    /// Each operation's query parameters, by operation ID.
    package static let queryParameters: [String: [QueryParameter]] = [
        Operations.ListMovies.id: [
            QueryParameter(name: "limit", range: 1...500),
            QueryParameter(name: "offset", range: 0...Int.max),
        ],
        Operations.ListMovieChanges.id: [QueryParameter(name: "movieID", range: 1...Int.max, required: true)],
    ]

    /// The id in the path, which must be positive (the generated server checks it is an integer).
    package static func id(_ id: Int) throws -> Int {
        guard id > 0 else { throw invalidID("id") }
        return id
    }

    /// The value of the query parameter `name` of `operation`, checked against its declared
    /// range, or `defaultValue` when absent.
    package static func query(_ value: Int?, _ name: String, of operation: String, default defaultValue: Int) throws
        -> Int
    {
        guard let value else { return defaultValue }
        let parameter = queryParameters[operation]?.first { $0.name == name }
        guard let parameter, parameter.range.contains(value) else {
            throw invalidQuery(parameter ?? QueryParameter(name: name, range: Int.min...Int.max))
        }
        return value
    }

    private static func invalidID(_ name: String) -> APIError {
        .badRequest("The \(name) must be a positive integer.", field: name, code: "invalid_id")
    }

    private static func invalidQuery(_ parameter: QueryParameter) -> APIError {
        let upper = parameter.range.upperBound == .max ? "" : " and at most \(parameter.range.upperBound)"
        return .badRequest(
            "\(parameter.name) must be an integer of at least \(parameter.range.lowerBound)\(upper).",
            field: parameter.name,
            code: "invalid_query"
        )
    }

    /// The API error for a request the generated server could not turn into its operation's
    /// input: the parameter or the body field at fault, named as the contract names it.
    ///
    /// Every parameter of the contract is an integer, and the generated server decodes the
    /// path's before the query's and both before the body: the first parameter that is missing
    /// though required, or is not an integer, is the one at fault. Otherwise it is the body,
    /// whose decoding error names its field, except for a number too large for an integer
    /// field, which is found in `body`.
    package static func apiError(forUndecodable error: ServerError, body: ByteBuffer?) -> APIError {
        let query = URLComponents(string: error.request.path ?? "")?.queryItems ?? []
        if let parameter = error.requestMetadata.pathParameters.first(where: { Int($0.value) == nil }) {
            return invalidID(parameter.key)
        }
        let declared = queryParameters[error.operationID] ?? []
        for parameter in declared {
            let values = query.filter { $0.name == parameter.name }
            if values.isEmpty && parameter.required {
                return .badRequest("\(parameter.name) is required.", field: parameter.name, code: "invalid_query")
            }
            if values.contains(where: { Int($0.value ?? "") == nil }) { return invalidQuery(parameter) }
        }
        guard let decoding = error.underlyingError as? DecodingError else { return .refused(by: error) }
        if case .dataCorrupted(let context) = decoding, context.codingPath.isEmpty,
            let field = body.flatMap(nonIntegerNumberField)
        {
            return .invalidField(field, "\(field) must be an integer.")
        }
        return apiError(for: decoding)
    }

    /// The first field of a JSON object whose value is a number but not an `Int`, such as
    /// `1e300`: Foundation's decoder reports such a number as invalid JSON, without its field.
    private static func nonIntegerNumberField(_ body: ByteBuffer) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] else {
            return nil
        }
        return object.keys.sorted()
            .first { key in
                guard let number = object[key] as? NSNumber, !(object[key] is Bool) else { return false }
                return Int(exactly: number.doubleValue) == nil || number.doubleValue >= 0x1p63
            }
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
    package static func validate(_ body: Components.Schemas.MovieInput) throws -> MovieInput {
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

    /// Validates a rating: 422 unless 1 to 5 stars.
    package static func stars(_ stars: Int) throws -> Int {
        guard (1...5).contains(stars) else {
            throw APIError.invalidField("stars", "stars must be an integer from 1 to 5.")
        }
        return stars
    }
}
