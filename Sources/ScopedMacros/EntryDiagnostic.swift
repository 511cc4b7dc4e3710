import SwiftDiagnostics

/// The compile-time errors `@Entry` reports, each saying what to write instead.
enum EntryDiagnostic: String, DiagnosticMessage {
    case notInScopedValuesExtension
    case notAVariable
    case letBinding
    case missingTypeAnnotation
    case missingDefaultValue
    case hasAccessors
    case isStatic

    var message: String {
        switch self {
        case .notInScopedValuesExtension:
            "'@Entry' can only be used inside 'extension ScopedValues { … }'"
        case .notAVariable:
            "'@Entry' can only be attached to a 'var' declaration: '@Entry var name: Type = defaultValue'"
        case .letBinding:
            "'@Entry' requires 'var', not 'let': scopes override entries by setting them"
        case .missingTypeAnnotation:
            "'@Entry' requires an explicit type annotation: '@Entry var name: Type = defaultValue'"
        case .missingDefaultValue:
            "'@Entry' requires a default value: '@Entry var name: Type = defaultValue' (only optional entries may omit it)"
        case .hasAccessors:
            "'@Entry' generates the getter and setter itself: remove the accessor block"
        case .isStatic:
            "'@Entry' declares an instance property of 'ScopedValues': remove 'static'"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "Scoped", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}

/// The fix-its attached to ``EntryDiagnostic``.
struct EntryFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "Scoped", id: message) }
}
