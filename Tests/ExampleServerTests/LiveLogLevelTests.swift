import Logging
import Testing

@testable import CatalogApp

struct LiveLogLevelTests {
    /// swift-otel sets its diagnostic logger's level: the server's other loggers must keep the
    /// process's level (they went silent below `info` when it changed them all).
    @Test func aLevelSetOnOneLoggerChangesThatLoggerOnly() {
        // No reload sets `critical`: the process's level is never it while this runs.
        var own = Logger(label: "own", factory: LiveLogLevel.handler)
        let other = Logger(label: "other", factory: LiveLogLevel.handler)
        own.logLevel = .critical
        #expect(own.logLevel == .critical)
        #expect(other.logLevel != .critical)
        #expect(LiveLogLevel.shared.level != .critical)
        // A copy keeps the level set on the logger it was copied from.
        let copy = own
        #expect(copy.logLevel == .critical)
    }
}
