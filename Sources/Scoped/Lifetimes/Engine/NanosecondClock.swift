import Dispatch

/// Nanoseconds since the first reading, from the monotonic clock (`DispatchTime`), in a word:
/// idle times, which an atomic holds, build times and deadlines.
///
/// A word, not a `ContinuousClock.Instant`: the standard library's `Instant` is resilient, and
/// an async function keeps a local of a resilient type in the task's allocator, allocated on
/// entry whatever path it takes (it was four allocations on every service read). And
/// `DispatchTime`, not `ContinuousClock`: an `Instant` is a 128-bit count of attoseconds, and
/// turning one into nanoseconds is a 128-bit division, the larger part of registering a
/// deadline; `DispatchTime.uptimeNanoseconds` is the clock's reading as it is.
enum NanosecondClock {
    private static let start = DispatchTime.now().uptimeNanoseconds

    /// Nanoseconds since the first reading; at least 1, so that 0 can mean "never".
    ///
    /// Never inlined: an async caller keeps no clock value of its own in the task's allocator.
    @inline(never)
    static func nanoseconds() -> Int64 {
        max(1, Int64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds &- start))
    }

    /// `duration` in nanoseconds, saturated to the range of `Int64`.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = nanoseconds.addingReportingOverflow(attoseconds / 1_000_000_000)
        if sumOverflow { return seconds < 0 ? .min : .max }
        return sum
    }
}
