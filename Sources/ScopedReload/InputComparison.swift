import Scoped

/// Whether what an app service read from one root holds the same values in another.
enum InputComparison {
    /// The first of `inputs` whose value in `root` differs from the one read, with what
    /// differs: `sqliteConfiguration.readers`, or the input's name when no field can be named.
    static func firstChange(of inputs: [ScopeInput], in root: ScopeRoot) -> String? {
        for input in inputs {
            let now = input.value(in: root)
            if !same(input.value, now) {
                return changedField(input.value, now).map { "\(input.name).\($0)" } ?? input.name
            }
        }
        return nil
    }

    /// Whether two values read for the same input are the same: equal when their type is
    /// `Equatable`, the same instance when it is a class, else never (a closure, a struct that
    /// cannot be compared), so that a service reading one is rebuilt rather than kept stale.
    static func same(_ old: any Sendable, _ new: any Sendable) -> Bool {
        if let old = old as? any Equatable { return old.isEqual(to: new) }
        if type(of: old) is AnyClass, type(of: new) is AnyClass {
            return (old as AnyObject) === (new as AnyObject)
        }
        return isNil(old) && isNil(new)
    }

    /// The mirror of the value an optional wraps, or `mirror` itself.
    private static func unwrapped(_ mirror: Mirror) -> Mirror {
        guard mirror.displayStyle == .optional, let wrapped = mirror.children.first else { return mirror }
        return Mirror(reflecting: wrapped.value)
    }

    private static func isNil(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    /// The label of the first stored property of two values of one type that differs, when
    /// the type has labelled properties.
    static func changedField(_ old: any Sendable, _ new: any Sendable) -> String? {
        let old = unwrapped(Mirror(reflecting: old))
        let new = unwrapped(Mirror(reflecting: new))
        guard old.subjectType == new.subjectType, old.children.count == new.children.count else { return nil }
        for (before, after) in zip(old.children, new.children) {
            guard let label = before.label else { return nil }
            if String(reflecting: before.value) != String(reflecting: after.value) { return label }
        }
        return nil
    }
}

extension Equatable {
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
