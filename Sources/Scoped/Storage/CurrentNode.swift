/// The runtime entry point behind `TaskLocal.get()`: a pointer to the value the calling task
/// (or, outside a task, the calling thread) binds to the task-local whose object is `key`, or
/// `nil` when nothing binds it.
///
/// `TaskLocal.get()` is not inlinable and returns a copy made through the value's generic
/// witness table. This is the function it calls, exported by the concurrency runtime since
/// Swift 5.5 and part of its ABI, like `swift_task_localValuePush` and `swift_task_localValuePop`,
/// which the standard library's inlinable `withValue` calls from its clients' code.
@usableFromInline
@_silgen_name("swift_task_localValueGet")
func taskLocalValueGet(key: UnsafeRawPointer) -> UnsafeMutableRawPointer?

/// Where the calling task binds the task-local whose `TaskLocal.runtimeKey` is `key`, or
/// `nil` when nothing binds it.
@inlinable
func boundTaskLocalValue(key: UInt) -> UnsafeMutableRawPointer? {
    taskLocalValueGet(key: UnsafeRawPointer(bitPattern: key)!)
}

extension TaskLocal {
    /// The key the runtime knows this task-local by: its object's address.
    var runtimeKey: UInt { UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }
}

extension ScopedValues {
    /// The key the runtime knows ``taskLocalNode`` by.
    @usableFromInline
    package static let taskLocalKey = taskLocalNode.runtimeKey

    /// Values that read every entry's default, where reads find them when no scope is bound.
    ///
    /// Allocated once and never freed or written.
    @usableFromInline
    nonisolated(unsafe) package static let unboundValues: UnsafeMutablePointer<ScopedValues> = {
        let values = UnsafeMutablePointer<ScopedValues>.allocate(capacity: 1)
        values.initialize(to: ScopedValues(node: .empty))
        return values
    }()

    /// Calls `body` with the current values where the task binds them, not with a copy.
    ///
    /// Why: a copy of the values is a retain of their node and a release after the read,
    /// two atomic operations that were a third of an `@Scoped` read's time. Handed in place,
    /// the read retains nothing but the value it returns.
    ///
    /// `inout` only so that the compiler may borrow the values rather than copy them: `body`
    /// must not write to them. The binding belongs to the calling task (or thread) and is
    /// popped only when the `withValue` that pushed it returns, which cannot happen while this
    /// synchronous call runs; nothing else writes to it meanwhile, as `inout` requires. The
    /// task-local holds a ``ScopeNode``, and `ScopedValues` is that node and nothing else, so
    /// the memory is rebound to it for the call (checked by the tests).
    @inlinable
    @inline(__always)
    package static func withCurrent<R>(_ body: (inout ScopedValues) throws -> R) rethrows -> R {
        guard let bound = boundTaskLocalValue(key: taskLocalKey) else {
            return try body(&unboundValues.pointee)
        }
        return try bound.withMemoryRebound(to: ScopedValues.self, capacity: 1) { try body(&$0.pointee) }
    }
}
