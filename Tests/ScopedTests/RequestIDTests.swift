@testable import Scoped
import Testing

/// The request IDs adapters make when their stack has none, and the client IDs they accept.
struct RequestIDTests {
    @Test func newIDsAre32HexDigitsAndNeverRepeatAcrossConcurrentRequests() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { (0..<5_000).map { _ in RequestIDs.next() } } }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(Set(ids).count == 40_000)
        #expect(ids.allSatisfy { $0.wholeMatch(of: /[0-9a-f]{32}/) != nil })
        // One process half: IDs of one process share it, so a log shows which process made one.
        #expect(Set(ids.map { $0.prefix(16) }).count == 1)
    }

    @Test(arguments: [
        ("abc-1.2_Z", true), (String(repeating: "a", count: 64), true),
        ("", false), (String(repeating: "a", count: 65), false), ("no spaces", false),
        ("line\nbreak", false), ("quote\"", false), ("é", false),
    ])
    func aClientIDIsAcceptedOnlyWhenItCannotForgeALogLine(id: String, accepted: Bool) {
        #expect((RequestIDs.accepting(id) == id) == accepted)
        #expect((RequestIDs.accepting(id) == nil) == !accepted)
    }
}
