/// The suite could not run a scenario: the reason, shown on its line.
struct SuiteError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
