import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Entry var name: Type = defaultValue` inside `extension ScopedValues`.
///
/// Expands, as SwiftUI's `@Entry` does, to a getter and setter that go through
/// `self[__Key_name.self]` and a private peer key type. Unlike SwiftUI, the key's
/// `defaultValue` is a `static let`: evaluated lazily on first read and exactly once per
/// process, even when many tasks read it first at the same time. `@Entry(testValue: x)` also
/// gives the key a `testValue`, which marks the entry live-only.
struct EntryMacro: AccessorMacro, PeerMacro {
    /// Expands `@Entry` into the property's getter and setter through its key.
    static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let entry = Entry.parse(declaration, attribute: node, in: context, reporting: true) else { return [] }
        return [
            "get { self[\(raw: entry.keyName).self] }",
            "set { self[\(raw: entry.keyName).self] = newValue }",
        ]
    }

    /// Expands `@Entry` into the property's private key type.
    static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // Diagnostics are reported once, by the accessor role.
        guard let entry = Entry.parse(declaration, attribute: node, in: context, reporting: false) else { return [] }
        let testValue = entry.testValue.map { "\n    static var testValue: Value? { \($0) }" } ?? ""
        return [
            """
            private struct \(raw: entry.keyName): ScopedKey {
                typealias Value = \(entry.type)
                static let defaultValue: Value = \(entry.defaultValue)\(raw: testValue)
            }
            """
        ]
    }
}

/// The parts of a valid `@Entry` declaration.
private struct Entry {
    let keyName: String
    let type: TypeSyntax
    let defaultValue: ExprSyntax
    /// The `testValue:` argument, which marks the entry live-only.
    let testValue: ExprSyntax?

    /// Reads an `@Entry` declaration; when `reporting`, diagnoses the first misuse in `context`.
    static func parse(
        _ declaration: some DeclSyntaxProtocol,
        attribute: AttributeSyntax,
        in context: some MacroExpansionContext,
        reporting: Bool
    ) -> Entry? {
        func fail(_ message: EntryDiagnostic, at node: some SyntaxProtocol, fixIts: [FixIt] = []) -> Entry? {
            if reporting { context.diagnose(Diagnostic(node: Syntax(node), message: message, fixIts: fixIts)) }
            return nil
        }
        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            return fail(.notAVariable, at: attribute)
        }
        if !Self.isInsideScopedValuesExtension(context.lexicalContext) {
            return fail(.notInScopedValuesExtension, at: attribute)
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let fixIt = FixIt(
                message: EntryFixIt(message: "replace 'let' with 'var'"),
                changes: [
                    .replace(
                        oldNode: Syntax(variable.bindingSpecifier),
                        newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.var)))
                    )
                ]
            )
            return fail(.letBinding, at: variable.bindingSpecifier, fixIts: [fixIt])
        }
        if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) }) {
            return fail(.isStatic, at: variable)
        }
        // Swift itself refuses attached accessor and peer macros on several bindings.
        guard variable.bindings.count == 1, let binding = variable.bindings.first else { return nil }
        guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier else {
            return fail(.notAVariable, at: binding.pattern)
        }
        guard let type = binding.typeAnnotation?.type.trimmed else {
            return fail(.missingTypeAnnotation, at: binding.pattern)
        }
        if binding.accessorBlock != nil {
            return fail(.hasAccessors, at: binding)
        }
        let defaultValue: ExprSyntax
        if let initializer = binding.initializer {
            defaultValue = initializer.value.trimmed
        } else if Self.isOptional(type) {
            defaultValue = "nil"
        } else {
            let fixIt = FixIt(
                message: EntryFixIt(message: "add a default value"),
                changes: [
                    .replace(
                        oldNode: Syntax(binding),
                        newNode: Syntax(
                            binding.with(
                                \.initializer,
                                InitializerClauseSyntax(
                                    equal: .equalToken(leadingTrivia: .space, trailingTrivia: .space),
                                    value: EditorPlaceholderExprSyntax(placeholder: .identifier("<#default value#>"))
                                )
                            )
                        )
                    )
                ]
            )
            return fail(.missingDefaultValue, at: binding, fixIts: [fixIt])
        }
        let testValue = attribute.arguments?.as(LabeledExprListSyntax.self)?
            .first { $0.label?.text == "testValue" }?
            .expression.trimmed
        return Entry(
            keyName: "__Key_\(name.trimmedDescription)",
            type: type,
            defaultValue: defaultValue,
            testValue: testValue
        )
    }

    private static func isInsideScopedValuesExtension(_ lexicalContext: [Syntax]) -> Bool {
        guard let innermost = lexicalContext.first?.as(ExtensionDeclSyntax.self) else { return false }
        let name = innermost.extendedType.trimmedDescription
        return name == "ScopedValues" || name == "Scoped.ScopedValues"
    }

    private static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional" { return true }
        if let member = type.as(MemberTypeSyntax.self), member.name.text == "Optional",
            member.baseType.trimmedDescription == "Swift"
        {
            return true
        }
        return false
    }
}
