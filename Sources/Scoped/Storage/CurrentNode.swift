extension ScopedValues {
    /// Calls `body` with the values the calling task (or, outside a task, thread) is bound to,
    /// read through the task-local's public `get()`.
    ///
    /// `body` must not write to them: it gets a copy, and a write would copy the node.
    @inlinable
    @inline(__always)
    static func withCurrent<R>(_ body: (inout ScopedValues) throws -> R) rethrows -> R {
        var values = ScopedValues(node: taskLocalNode.get())
        return try body(&values)
    }
}
