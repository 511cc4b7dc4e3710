/// A movie as the server answers with it; the fields the suite checks.
struct Movie: Decodable, Equatable {
    var id: Int
    var title: String
    var director: String?
}
