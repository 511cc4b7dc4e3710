import Foundation

/// Runs `body(index)` on `count` threads of their own (blocking sockets need threads, not
/// tasks) and returns when all have finished.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// Polls `condition` every 50 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return condition()
}

extension Int {
    /// `100000` as `100,000`.
    var grouped: String { formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US"))) }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// Whole milliseconds, for a report: `706 ms`.
    var inMilliseconds: String { "\(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000) ms" }
}
