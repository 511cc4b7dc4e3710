import ScopedMacrosImplementation
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plug-in that provides Scoped's macros.
///
/// The expansions live in `ScopedMacrosImplementation`, a plain library, so that the macro's
/// tests link them without depending on this target: one test target that depends on a macro
/// makes SwiftPM build every test target, and everything they depend on, a second time for the
/// host (half of a clean `swift test`'s build here).
@main
struct ScopedMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [EntryMacro.self]
}

/// `@Entry`, under the name `Entry.swift` gives the compiler (`ScopedMacros.EntryMacro`): the
/// compiler asks a plug-in for a macro by its module and type, so the type is declared here and
/// expands as `ScopedMacrosImplementation.EntryMacro` does.
struct EntryMacro: AccessorMacro, PeerMacro {
    /// The property's getter and setter through its key.
    static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        try ScopedMacrosImplementation.EntryMacro.expansion(of: node, providingAccessorsOf: declaration, in: context)
    }

    /// The property's private key type.
    static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try ScopedMacrosImplementation.EntryMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}
