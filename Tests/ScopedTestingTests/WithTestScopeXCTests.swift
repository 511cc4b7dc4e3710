import Scoped
import ScopedTesting
import XCTest

/// `withTestScope` from XCTest, where Swift Testing's traits do not reach.
final class WithTestScopeXCTests: XCTestCase {
    func testOverridesAreSeenInsideTheTestScope() async throws {
        let now = try await withTestScope({ $0.clock = FixedClock(time: 99) }) {
            ScopedValues.current.clock.now()
        }
        XCTAssertEqual(now, 99)
        XCTAssertFalse(ScopedValues.current.isTestScope)
    }

    func testEveryTestScopeStartsWithFreshAppServices() async throws {
        for _ in 0..<3 {
            let visits = try await withTestScope {
                try await ScopedValues.current.service(VisitCounterKey.self).visit()
            }
            XCTAssertEqual(visits, 1)
        }
    }
}
