import Testing

#if canImport(XCTest)
import XCTest
#endif

/// The failure recorded when a test reads a live-only entry it did not override.
func liveDefaultFailureMessage(entry: String) -> String {
    "'\(entry)' is live-only: its default must not run in tests, and this test did not override it. "
        + "Override it for the test with: @Test(.scoped { $0.\(entry) = <#test value#> })"
}

/// A recorder that reports to the test framework running the code that calls this: Swift
/// Testing when a Swift Testing test is current, at that test's source location, XCTest
/// otherwise.
func liveDefaultRecorder() -> @Sendable (String) -> Void {
    #if canImport(XCTest)
    if Test.current == nil {
        return { entry in XCTFail(liveDefaultFailureMessage(entry: entry)) }
    }
    #endif
    return issueRecorder(liveDefaultFailureMessage(entry:))
}

/// Records `message(detail)` as an issue of the Swift Testing test current now, at the test's
/// own source location: a failure found by the library points at the test, not at a line of
/// the library.
private func issueRecorder(_ message: @escaping @Sendable (String) -> String) -> @Sendable (String) -> Void {
    guard let location = Test.current?.sourceLocation else {
        return { detail in Issue.record(Comment(rawValue: message(detail))) }
    }
    return { detail in Issue.record(Comment(rawValue: message(detail)), sourceLocation: location) }
}

/// The failure recorded when a test ends with work it started still running.
func leftRunningFailureMessage(_ work: String) -> String {
    "The test ended with \(work) still running: await it, close it, or end it before the test returns, "
        + "or it runs on into the next test."
}

/// A recorder for work a test left running, reporting as ``liveDefaultRecorder()`` does.
func leftRunningRecorder() -> @Sendable (String) -> Void {
    #if canImport(XCTest)
    if Test.current == nil {
        return { work in XCTFail(leftRunningFailureMessage(work)) }
    }
    #endif
    return issueRecorder(leftRunningFailureMessage)
}
